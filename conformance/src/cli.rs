//! Command line: `a3s-code-conformance [--scenarios DIR] [--baseline FILE]
//! [--filter SUBSTR] <bridge-executable> [bridge args...]`. Options come
//! before the executable; everything after it goes to the bridge unchanged.

use std::path::PathBuf;

pub const USAGE: &str = "usage: a3s-code-conformance [--scenarios DIR] [--baseline FILE] [--filter SUBSTR] <bridge-executable> [bridge args...]";

#[derive(Debug, Default, PartialEq)]
pub struct Cli {
    pub scenarios: Option<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub filter: Option<String>,
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Parses the arguments after the program name. `Err` carries the message
/// to print (usage included); `Ok(None)` means `--help`.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Cli>, String> {
    let mut cli = Cli::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--scenarios" => cli.scenarios = Some(value("--scenarios")?.into()),
            "--baseline" => cli.baseline = Some(value("--baseline")?.into()),
            "--filter" => cli.filter = Some(value("--filter")?),
            "--" => {
                let program = args
                    .next()
                    .ok_or_else(|| format!("missing the bridge executable\n{USAGE}"))?;
                return Ok(Some(finish(cli, program, args)));
            }
            option if option.starts_with('-') => {
                return Err(format!("unknown option {option}\n{USAGE}"))
            }
            _ => return Ok(Some(finish(cli, arg, args))),
        }
    }
    Err(format!("missing the bridge executable\n{USAGE}"))
}

fn finish(mut cli: Cli, program: String, rest: impl Iterator<Item = String>) -> Cli {
    cli.program = program.into();
    cli.args = rest.collect();
    cli
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_then_bridge_command() {
        let cli = parse(args(&[
            "--filter",
            "hand",
            "--baseline",
            "b.txt",
            "./bridge",
            "--max-line-bytes",
            "9",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(cli.filter.as_deref(), Some("hand"));
        assert_eq!(cli.baseline, Some(PathBuf::from("b.txt")));
        assert_eq!(cli.program, PathBuf::from("./bridge"));
        assert_eq!(cli.args, args(&["--max-line-bytes", "9"]));
        assert_eq!(
            parse(args(&["--", "-odd-name"])).unwrap().unwrap().program,
            PathBuf::from("-odd-name")
        );
    }

    #[test]
    fn errors_and_help() {
        assert!(parse(args(&[])).unwrap_err().contains("missing"));
        assert!(parse(args(&["--filter"]))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(args(&["--bogus", "x"]))
            .unwrap_err()
            .contains("unknown option"));
        assert_eq!(parse(args(&["--help"])).unwrap(), None);
    }
}
