//! SVG charts for the HTML report, drawn by hand so the report stays one file with no scripts
//! from elsewhere: a line chart with labelled, numbered axes, and the ratings with intervals.

use super::write::html_escape;
use crate::stats::signed;
use std::fmt::Write as _;

const COLOURS: [&str; 10] = [
    "#c0392b", "#2e6da4", "#27ae60", "#8e44ad", "#d68910", "#16a085", "#7f8c8d", "#b03a7a",
    "#5d6d7e", "#a04000",
];

/// One line of a chart, with an optional shaded band (lower, upper) at the same x values.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub band: Vec<(f64, f64, f64)>,
}

/// A horizontal reference line with its label (an SPRT bound, zero).
pub struct Rule {
    pub y: f64,
    pub label: String,
}

pub struct Axes<'a> {
    pub label: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
}

/// About five round tick values (1, 2 or 5 times a power of ten) covering `lo..hi`.
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

fn number(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A line chart: numbered axes with their titles, reference lines, a legend for several lines.
/// The ranges the chart shows: x from the points, y from points, bands and rules with a 5%
/// margin; a flat range is widened so that it can be drawn. `None`: nothing to draw.
fn extent(series: &[Series], rules: &[Rule]) -> Option<(f64, f64, f64, f64)> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x_lo.is_finite() {
        return None;
    }
    let x_hi = if x_hi > x_lo { x_hi } else { x_lo + 1.0 };
    let ys = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.band.iter().flat_map(|b| [b.1, b.2]))
        })
        .chain(rules.iter().map(|r| r.y))
        .filter(|y| y.is_finite());
    let (mut y_lo, mut y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    if !y_lo.is_finite() || !y_hi.is_finite() {
        (y_lo, y_hi) = (-1.0, 1.0);
    } else if y_hi <= y_lo {
        (y_lo, y_hi) = (y_lo - 1.0, y_lo + 1.0);
    }
    let margin = (y_hi - y_lo) * 0.05;
    let (y_lo, y_hi) = (y_lo - margin, y_hi + margin);
    Some((x_lo, x_hi, y_lo, y_hi))
}

/// Width of one character of an 11 px label, wide enough for a sans-serif face's widest.
const CHAR_W: f64 = 6.5;

/// The most characters a label right of the plot shows; a longer one is cut with `…` (its
/// whole text in the line's tooltip).
const LABEL_CHARS: usize = 28;

/// A label right of the plot, cut to `LABEL_CHARS`.
fn side_label(text: &str) -> String {
    match text.chars().count() > LABEL_CHARS {
        true => text.chars().take(LABEL_CHARS - 1).chain(['…']).collect(),
        false => text.to_string(),
    }
}

pub fn line_chart(axes: &Axes, series: &[Series], rules: &[Rule]) -> String {
    // The plot gives way to the labels right of it (the legend, the rules' names), so that
    // none is cut at the picture's edge.
    let legend = series
        .iter()
        .filter(|_| series.len() > 1)
        .map(|s| (20.0, &s.name));
    let named = rules.iter().map(|r| (4.0, &r.label));
    let right = legend
        .chain(named)
        .map(|(at, l)| at + 8.0 + CHAR_W * side_label(l).chars().count() as f64)
        .fold(40.0, f64::max);
    let w = 680.0_f64.max(62.0 + 360.0 + right);
    let h = 300.0;
    let (left, top, bottom) = (62.0, 14.0, 46.0);
    let Some((x_lo, x_hi, y_lo, y_hi)) = extent(series, rules) else {
        return String::new();
    };
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let x = |v: f64| left + (v - x_lo) / (x_hi - x_lo) * plot_w;
    let y = |v: f64| top + (y_hi - v.clamp(y_lo, y_hi)) / (y_hi - y_lo) * plot_h;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} \
            {h}\" role=\"img\" aria-label=\"{}\" font-size=\"11\">",
        html_escape(axes.label)
    );
    let _ = write!(
        svg,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{plot_h}\" \
        fill=\"none\" stroke=\"#888\"/>"
    );
    for t in ticks(y_lo, y_hi) {
        let _ = write!(
            svg,
            "<line class=\"ytick\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" \
            y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" \
            text-anchor=\"end\">{}</text>",
            left,
            y(t),
            left + plot_w,
            y(t),
            left - 5.0,
            y(t) + 4.0,
            number(t)
        );
    }
    for t in ticks(x_lo, x_hi) {
        let _ = write!(
            svg,
            "<line class=\"xtick\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" \
            y2=\"{:.1}\" stroke=\"#888\"/><text x=\"{:.1}\" y=\"{:.1}\" \
            text-anchor=\"middle\">{}</text>",
            x(t),
            top + plot_h,
            x(t),
            top + plot_h + 4.0,
            x(t),
            top + plot_h + 16.0,
            number(t)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
        left + plot_w / 2.0,
        h - 8.0,
        html_escape(axes.x_label)
    );
    let _ = write!(
        svg,
        "<text transform=\"translate(14 {:.1}) rotate(-90)\" \
        text-anchor=\"middle\" font-size=\"12\">{}</text>",
        top + plot_h / 2.0,
        html_escape(axes.y_label)
    );
    for r in rules {
        let _ = write!(
            svg,
            "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" \
            stroke=\"#999\" stroke-dasharray=\"5\"/><text x=\"{:.1}\" \
            y=\"{:.1}\">{}</text>",
            y(r.y),
            left + plot_w,
            y(r.y),
            left + plot_w + 4.0,
            y(r.y) + 4.0,
            html_escape(&side_label(&r.label))
        );
    }
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        if !s.band.is_empty() {
            let upper = s
                .band
                .iter()
                .map(|b| format!("{:.1},{:.1}", x(b.0), y(b.2)));
            let lower = s
                .band
                .iter()
                .rev()
                .map(|b| format!("{:.1},{:.1}", x(b.0), y(b.1)));
            let outline: Vec<String> = upper.chain(lower).collect();
            let _ = write!(
                svg,
                "<polygon points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.15\" stroke=\"none\"/>",
                outline.join(" ")
            );
        }
        let points: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
            .collect();
        let _ = write!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" \
            points=\"{}\"><title>{}</title></polyline>",
            points.join(" "),
            html_escape(&s.name)
        );
        if series.len() > 1 {
            let ly = top + 14.0 * i as f64 + 8.0;
            let _ = write!(
                svg,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"3\" \
                fill=\"{colour}\"/><text x=\"{:.1}\" \
                y=\"{:.1}\">{}</text>",
                left + plot_w + 6.0,
                ly - 2.0,
                left + plot_w + 20.0,
                ly + 2.0,
                html_escape(&side_label(&s.name))
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Each rated engine's Elo as a dot and its 95% interval as a bar, on a numbered axis.
pub fn ratings_chart(rated: &[(String, f64, f64, f64)]) -> String {
    if rated.is_empty() {
        return String::new();
    }
    let lo = rated.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    let hi = rated.iter().map(|r| r.3).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi - lo < 1.0 {
        (lo - 50.0, hi + 50.0)
    } else {
        (lo, hi)
    };
    let (left, width, row_h) = (170.0, 460.0, 28.0);
    let x = |v: f64| left + (v - lo) / (hi - lo) * width;
    let axis_y = row_h * rated.len() as f64 + 14.0;
    let height = axis_y + 40.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" \
        height=\"{height}\" viewBox=\"0 0 660 {height}\" role=\"img\" aria-label=\"Ratings with \
        95% intervals\" font-size=\"11\">"
    );
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\" stroke=\"#888\"/>",
        left + width
    );
    for t in ticks(lo, hi) {
        let _ = write!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"10\" x2=\"{0:.1}\" y2=\"{axis_y}\" \
            stroke=\"{1}\"/><text x=\"{0:.1}\" y=\"{2:.1}\" \
            text-anchor=\"middle\">{3}</text>",
            x(t),
            if t == 0.0 { "#999" } else { "#eee" },
            axis_y + 14.0,
            number(t)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">Elo \
        (joint rating, 95% interval)</text>",
        left + width / 2.0,
        height - 6.0
    );
    for (i, (name, e, l, h)) in rated.iter().enumerate() {
        let y = 22.0 + row_h * i as f64;
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"13\">{}</text>",
            left - 10.0,
            y + 4.0,
            html_escape(name)
        );
        let _ = write!(
            svg,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" \
            stroke=\"#4a6fa5\" stroke-width=\"3\"/>",
            x(*l),
            x(*h)
        );
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#c0392b\"><title>{} \
            {} ({} .. {})</title></circle>",
            x(*e),
            html_escape(name),
            signed(*e),
            signed(*l),
            signed(*h)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(-2.94, 2.94), vec![-2.0, 0.0, 2.0]);
        assert_eq!(ticks(-1.0, 1.0), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(ticks(3.0, 3.0), vec![3.0]);
    }

    /// Engines with long names in a chart's legend: every label ends inside the picture.
    #[test]
    fn the_legend_fits_inside_the_chart() {
        let names = [
            "search-engine-with-a-long-name",
            "greedy",
            "an-engine-whose-name-goes-on-and-on-and-on",
        ];
        let series: Vec<Series> = names
            .iter()
            .map(|n| Series {
                name: n.to_string(),
                points: vec![(1.0, 0.0), (10.0, 5.0)],
                band: Vec::new(),
            })
            .collect();
        let axes = Axes {
            label: "Elo against the field over the run",
            x_label: "games",
            y_label: "Elo against the field",
        };
        let svg = line_chart(&axes, &series, &[]);
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let labels: Vec<(f64, String)> = svg
            .split("<text x=\"")
            .skip(1)
            .map(|t| {
                let (x, rest) = t.split_once('"').unwrap();
                let text = rest.split_once('>').unwrap().1.split('<').next().unwrap();
                (x.parse().unwrap(), text.to_string())
            })
            .filter(|(_, t)| names.iter().any(|n| n.starts_with(t.trim_end_matches('…'))))
            .collect();
        assert_eq!(labels.len(), 3, "{svg}");
        for (x, text) in labels {
            let end = x + CHAR_W * text.chars().count() as f64;
            assert!(end <= width, "'{text}' ends at {end}, the chart at {width}");
        }
        // The whole name stays in the line's tooltip.
        assert!(svg.contains("<title>an-engine-whose-name-goes-on-and-on-and-on</title>"));
    }

    #[test]
    fn a_chart_numbers_and_names_its_axes() {
        let s = Series {
            name: "LLR".into(),
            points: vec![(1.0, 0.0), (50.0, 1.5), (100.0, 3.0)],
            band: Vec::new(),
        };
        let rule = Rule {
            y: 2.94,
            label: "H1".into(),
        };
        let svg = line_chart(
            &Axes {
                label: "LLR",
                x_label: "game pairs",
                y_label: "LLR",
            },
            &[s],
            &[rule],
        );
        assert!(svg.contains(">game pairs<") && svg.contains(">H1<"));
        assert!(svg.contains(">100<") && svg.contains(">0<"), "{svg}");
        assert_eq!(svg.matches("<polyline").count(), 1);
    }
}
