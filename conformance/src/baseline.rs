//! The expected-failures baseline: scenario ids known to fail, one per line,
//! `#` starts a comment. A listed scenario that fails is an expected failure
//! (XFAIL, counted as passed); a listed scenario that passes is a failure,
//! so the baseline only ever shrinks as the bridge gets fixed.

use std::collections::BTreeSet;

#[derive(Debug, Default, Clone)]
pub struct Baseline {
    ids: BTreeSet<String>,
}

impl Baseline {
    pub fn parse(text: &str) -> Baseline {
        let ids = text
            .lines()
            .map(|line| line.split('#').next().unwrap_or("").trim())
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect();
        Baseline { ids }
    }

    pub fn lists(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }
}

/// How a scenario's outcome counts.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    ExpectedFailure,
    UnexpectedPass,
}

impl Verdict {
    pub fn judge(listed: bool, passed: bool) -> Verdict {
        match (listed, passed) {
            (false, true) => Verdict::Pass,
            (false, false) => Verdict::Fail,
            (true, false) => Verdict::ExpectedFailure,
            (true, true) => Verdict::UnexpectedPass,
        }
    }

    /// Whether it counts towards "passed" in the summary.
    pub fn counts_as_passed(&self) -> bool {
        matches!(self, Verdict::Pass | Verdict::ExpectedFailure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_and_comments() {
        let b =
            Baseline::parse("# known bugs\nhandshake  # issue 3\n\n  stream-flow-control\n#all\n");
        assert_eq!(
            b.ids().collect::<Vec<_>>(),
            ["handshake", "stream-flow-control"]
        );
        assert!(b.lists("handshake") && !b.lists("all"));
    }

    #[test]
    fn verdicts() {
        assert_eq!(Verdict::judge(false, true), Verdict::Pass);
        assert_eq!(Verdict::judge(false, false), Verdict::Fail);
        assert_eq!(Verdict::judge(true, false), Verdict::ExpectedFailure);
        assert_eq!(Verdict::judge(true, true), Verdict::UnexpectedPass);
        assert!(Verdict::ExpectedFailure.counts_as_passed());
        assert!(!Verdict::UnexpectedPass.counts_as_passed());
    }
}
