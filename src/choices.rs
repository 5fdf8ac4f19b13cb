//! The command line's closed choices, each read into the library's own type: the library
//! carries no command-line dependency, so the names `--help` lists are given here.

use arbiter::stats::bayeselo::Intervals;
use arbiter::tournament::{Colours, Format};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// `--format`: round-robin (also roundrobin, rr) or gauntlet.
pub fn format() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new([
        PossibleValue::new("round-robin")
            .aliases(["roundrobin", "rr"])
            .help("Everyone plays everyone"),
        PossibleValue::new("gauntlet").help("The first engine plays every other one"),
    ])
    .map(|name| Format::parse(&name).expect("a name clap accepted"))
}

/// `--colours`: who has White in each game of a pair.
pub fn colours() -> impl TypedValueParser<Value = Colours> {
    PossibleValuesParser::new([
        PossibleValue::new("alternate")
            .help("The first engine White in a pair's first game and Black in its second"),
        PossibleValue::new("reverse")
            .help("The second engine White in a pair's first game and Black in its second"),
        PossibleValue::new("first-white")
            .help("The first engine White in both games of a pair (no colour-reversed pairs)"),
        PossibleValue::new("second-white").help("The second engine White in both games of a pair"),
    ])
    .map(|name| match name.as_str() {
        "reverse" => Colours::Reverse,
        "first-white" => Colours::FirstWhite,
        "second-white" => Colours::SecondWhite,
        _ => Colours::Alternate,
    })
}

/// `rate --intervals`: how BayesElo's intervals are computed.
pub fn intervals() -> impl TypedValueParser<Value = Intervals> {
    PossibleValuesParser::new([
        PossibleValue::new("exactdist")
            .help("BayesElo's `exactdist`: each player's own likelihood, others following"),
        PossibleValue::new("covariance").help("BayesElo's `covariance`: the normal approximation"),
    ])
    .map(|name| match name.as_str() {
        "covariance" => Intervals::Covariance,
        _ => Intervals::Exactdist,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[arg(long, value_parser = format(), default_value = "round-robin")]
        format: Format,
        #[arg(long, value_parser = colours(), default_value = "alternate")]
        colours: Colours,
        #[arg(long, value_parser = intervals(), default_value = "exactdist")]
        intervals: Intervals,
    }

    /// Every name `--help` lists reads into the library value of the same name, as the run
    /// records it.
    #[test]
    fn every_listed_name_reads_as_the_value_it_names() {
        for (name, want) in [
            ("alternate", Colours::Alternate),
            ("reverse", Colours::Reverse),
            ("first-white", Colours::FirstWhite),
            ("second-white", Colours::SecondWhite),
        ] {
            let line = Line::try_parse_from(["x", "--colours", name]).unwrap();
            assert_eq!(line.colours, want);
            assert_eq!(serde_json::to_string(&want).unwrap(), format!("\"{name}\""));
        }
        for name in ["round-robin", "roundrobin", "rr", "gauntlet"] {
            let line = Line::try_parse_from(["x", "--format", name]).unwrap();
            assert_eq!(Some(line.format), Format::parse(name));
        }
        let line = Line::try_parse_from(["x", "--intervals", "covariance"]).unwrap();
        assert_eq!(line.intervals, Intervals::Covariance);
        let line = Line::try_parse_from(["x"]).unwrap();
        assert_eq!(
            (line.format, line.colours, line.intervals),
            (Format::RoundRobin, Colours::Alternate, Intervals::Exactdist)
        );
        assert!(Line::try_parse_from(["x", "--colours", "white"]).is_err());
    }
}
