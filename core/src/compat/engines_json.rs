//! cutechess-cli's `conf=NAME`: an engine described in Cute Chess's `engines.json`, looked for
//! where cutechess-cli looks (cutechesscoreapp.cpp): `engines.json` in the working folder, else
//! in its configuration folder (`$XDG_CONFIG_HOME/cutechess`, by default `~/.config/cutechess`).
//! The file is a JSON array of engines with the keys engineconfiguration.cpp reads: `name`,
//! `command`, `workingDirectory`, `stderrFile`, `protocol`, `restart`, `initStrings`,
//! `ponder`, `options` (each with `name`, `value` and `default`), and some arbiter has no use for
//! (`whitepov`, `validateClaims`, `timeoutScaleFactor`, `variants`, `debug`).

use serde_json::Value;
use std::path::PathBuf;

/// The places looked in, in order.
fn candidates() -> Vec<PathBuf> {
    let mut places = vec![PathBuf::from("engines.json")];
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if let Some(config) = config {
        places.push(config.join("cutechess").join("engines.json"));
    }
    places
}

/// The engine settings (`cmd=`, `name=`, `option.X=` ...) that `conf=name` stands for, or why
/// there are none. `on_the_line`: the settings the user named beside `conf=` (`stderr`,
/// `dir`, `option.X`), which take the place of the file's.
///
/// An `engines.json` found in the working folder may have come with a downloaded engine: the
/// file it names for stderr, the folder it names to work in and the paths its options name are
/// taken only from the user's own line (or from the file in the user's configuration folder),
/// never from it: arbiter would otherwise write where the engine's author chose, or show the
/// engine a file the author named.
pub fn settings_of(name: &str, on_the_line: &[&str]) -> Result<Vec<String>, String> {
    let places = candidates();
    let place = places.iter().position(|p| p.is_file());
    let Some(path) = place.map(|at| &places[at]) else {
        let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "conf={name}: no engines.json (looked in {})",
            looked.join(" and ")
        ));
    };
    let text = crate::input::read_text_capped(path, 64 << 20)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let engines: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}:{}: {e}", path.display(), e.line()))?;
    let engines = engines
        .as_array()
        .ok_or_else(|| format!("{}: not a list of engines", path.display()))?;
    let found = engines
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name));
    let Some(engine) = found else {
        let names: Vec<&str> = engines
            .iter()
            .filter_map(|e| e.get("name").and_then(Value::as_str))
            .collect();
        return Err(format!(
            "Unknown engine configuration: {name} ({} holds {})",
            path.display(),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let settings = settings(engine).map_err(|why| format!("{} ({name}): {why}", path.display()))?;
    match place {
        Some(0) => untrusted_paths_refused(settings, on_the_line, path),
        _ => Ok(settings),
    }
}

/// The settings of an `engines.json` found in the working folder, without those the line
/// replaces; refused where the file alone would choose a path arbiter writes or the engine reads.
fn untrusted_paths_refused(
    settings: Vec<String>,
    on_the_line: &[&str],
    path: &std::path::Path,
) -> Result<Vec<String>, String> {
    let mut kept = Vec::new();
    for setting in settings {
        let (key, value) = setting.split_once('=').unwrap_or((&setting, ""));
        let chooses_a_path = match key {
            "stderr" | "dir" => true,
            _ => key.starts_with("option.") && value.contains('/'),
        };
        if !chooses_a_path {
            kept.push(setting);
        } else if !on_the_line.contains(&key) {
            return Err(format!(
                "{} is in the working folder, where it may have come with the engine, and its \
                 {key}={value} would choose a path arbiter writes or the engine reads: name it \
                 yourself on the line ({key}=...), or keep the file in ~/.config/cutechess/",
                path.display()
            ));
        }
    }
    Ok(kept)
}

fn settings(engine: &Value) -> Result<Vec<String>, String> {
    let text = |key: &str| {
        engine
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut out = Vec::new();
    let command = text("command").ok_or("no command")?;
    out.push(format!("cmd={}", command.trim()));
    if let Some(name) = text("name") {
        out.push(format!("name={name}"));
    }
    if let Some(dir) = text("workingDirectory") {
        out.push(format!("dir={dir}"));
    }
    if let Some(file) = text("stderrFile") {
        out.push(format!("stderr={file}"));
    }
    match text("protocol") {
        Some("uci") | None => {}
        Some("xboard") => out.push("proto=xboard".into()),
        Some(other) => return Err(format!("protocol '{other}': uci or xboard")),
    }
    match text("restart") {
        Some("on") => out.push("restart=on".into()),
        Some("off" | "auto") | None => {}
        Some(other) => return Err(format!("restart '{other}': auto, on or off")),
    }
    if engine
        .get("initStrings")
        .and_then(Value::as_array)
        .is_some_and(|lines| !lines.is_empty())
    {
        return Err(
            "initStrings has no equivalent: set what it sets with its options instead".into(),
        );
    }
    if engine.get("ponder").and_then(Value::as_bool) == Some(true) {
        return Err("ponder: arbiter does not let an engine think on its opponent's time".into());
    }
    for option in engine
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = option.get("name").and_then(Value::as_str) else {
            continue;
        };
        let shown = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        // As cutechess-cli sets them: the options whose value is not their default.
        let value = option.get("value").and_then(shown);
        if let Some(value) =
            value.filter(|v| option.get("default").and_then(shown).as_ref() != Some(v))
        {
            out.push(format!("option.{name}={value}"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_of_cute_chess_reads_as_its_settings() {
        let engine: Value = serde_json::from_str(
            r#"{"name": "SF 16", "command": "/opt/sf/stockfish", "workingDirectory": "/opt/sf",
                "protocol": "uci", "restart": "on", "whitepov": false,
                "options": [
                  {"name": "Hash", "type": "spin", "value": 256, "default": 16},
                  {"name": "Threads", "type": "spin", "value": 1, "default": 1},
                  {"name": "Ponder", "type": "check", "value": false, "default": false},
                  {"name": "SyzygyPath", "type": "string", "value": "/tb"}
                ]}"#,
        )
        .unwrap();
        assert_eq!(
            settings(&engine).unwrap(),
            [
                "cmd=/opt/sf/stockfish",
                "name=SF 16",
                "dir=/opt/sf",
                "restart=on",
                "option.Hash=256",
                "option.SyzygyPath=/tb"
            ]
        );
        let from_the_folder = || settings(&engine).unwrap();
        let path = std::path::Path::new("engines.json");
        let refused = untrusted_paths_refused(from_the_folder(), &[], path).unwrap_err();
        assert!(refused.contains("dir=/opt/sf"), "{refused}");
        let named = ["dir", "option.SyzygyPath"];
        let kept = untrusted_paths_refused(from_the_folder(), &named, path).unwrap();
        assert_eq!(
            kept,
            [
                "cmd=/opt/sf/stockfish",
                "name=SF 16",
                "restart=on",
                "option.Hash=256"
            ]
        );
        let with_init: Value =
            serde_json::from_str(r#"{"command": "e", "initStrings": ["x"]}"#).unwrap();
        assert!(settings(&with_init).unwrap_err().contains("initStrings"));
    }
}
