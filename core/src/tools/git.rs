//! `git`: read-mostly git commands in the workspace.
//!
//! A narrower door than `bash`, meant to be safe to allow without asking:
//! only inspection subcommands run, and options that would point git at
//! another repository, run configured programs, write files or read files
//! outside the workspace are refused before git starts.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::Command;

use super::bash::{run_in_group, RunEnd, MAX_OUTPUT_BYTES};
use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

/// Subcommands that inspect a repository.
pub const GIT_SUBCOMMANDS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "branch",
    "blame",
    "ls-files",
    "rev-parse",
];
/// How long one git command may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Long options refused anywhere before `--` (also as `--opt=value` or an
/// abbreviation): repository redirection, config injection, file output,
/// external programs and reading files outside the repository. Short `-c`
/// and `-C` are refused too.
const REFUSED_OPTIONS: &[&str] = &[
    "--git-dir",
    "--work-tree",
    "--exec-path",
    "--output",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--ext-diff",
    "--textconv",
    "--no-index",
    "--contents",
    "--open-files-in-pager",
];

/// `git branch` options that change branches rather than list them.
const BRANCH_WRITES: &[&str] = &[
    "-d",
    "-D",
    "--delete",
    "-m",
    "-M",
    "--move",
    "--copy",
    "-f",
    "--force",
    "-u",
    "--set-upstream-to",
    "--unset-upstream",
    "--edit-description",
    "-t",
    "--track",
    "--no-track",
    "--create-reflog",
];

/// `git branch` listing options that take the next argument as their value.
const BRANCH_VALUE_OPTIONS: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--column",
];

#[derive(Debug)]
pub struct GitTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GitArgs {
    args: Vec<String>,
}

/// Checks the argument list; the message says what was refused and why.
fn check(args: &[String]) -> Result<(), String> {
    let Some(sub) = args.first() else {
        return Err(format!(
            "args must start with a subcommand, one of: {}",
            GIT_SUBCOMMANDS.join(", ")
        ));
    };
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(format!(
            "git {sub} is not allowed; allowed subcommands: {} (use bash for anything else)",
            GIT_SUBCOMMANDS.join(", ")
        ));
    }
    let mut after_dashdash = false;
    for arg in &args[1..] {
        if arg == "--" {
            after_dashdash = true;
        }
        if after_dashdash {
            continue;
        }
        let option = arg.split('=').next().unwrap_or(arg);
        let refused = if option.starts_with("--") {
            // git accepts unambiguous abbreviations: --outp means --output.
            REFUSED_OPTIONS
                .iter()
                .any(|r| r.starts_with("--") && r.starts_with(option))
        } else {
            // -c and -C, alone or glued to their value (-C/path, -cname=value).
            arg.starts_with("-c") || arg.starts_with("-C")
        };
        if refused {
            return Err(format!("option {arg} is not allowed in the git tool"));
        }
    }
    if sub == "branch" {
        check_branch(&args[1..])?;
    }
    Ok(())
}

/// `git branch` may only list: no write options, and names only as
/// `--list` patterns or values of listing options.
fn check_branch(args: &[String]) -> Result<(), String> {
    let listing = args.iter().any(|a| a == "--list" || a == "-l");
    let mut expects_value = false;
    for arg in args {
        let option = arg.split('=').next().unwrap_or(arg);
        let writes = if option.starts_with("--") {
            BRANCH_WRITES
                .iter()
                .any(|w| w.starts_with("--") && w.starts_with(option))
        } else {
            BRANCH_WRITES.contains(&option)
        };
        if writes {
            return Err(format!(
                "git branch {arg} changes branches; the git tool only lists them"
            ));
        }
        if expects_value {
            expects_value = false;
        } else if BRANCH_VALUE_OPTIONS.contains(&arg.as_str()) {
            expects_value = true;
        } else if !arg.starts_with('-') && !listing {
            return Err(format!(
                "git branch {arg} would create a branch; the git tool only lists them (use --list for patterns)"
            ));
        }
    }
    Ok(())
}

/// Options added right after the subcommand so that repository config and
/// attributes cannot make a read run an external program.
fn hardening(sub: &str) -> &'static [&'static str] {
    match sub {
        "diff" | "log" | "show" => &["--no-ext-diff", "--no-textconv"],
        "blame" => &["--no-textconv"],
        _ => &[],
    }
}

#[async_trait::async_trait]
impl Tool for GitTool {
    fn available(&self, _workspace: &super::Workspace) -> bool {
        super::program_on_path("git")
    }

    fn name(&self) -> &str {
        "git"
    }

    fn description(&self) -> &str {
        "Run a read-only git command in the workspace, e.g. [\"status\", \"--short\"] or [\"log\", \"-n\", \"5\", \"--oneline\"]. Allowed subcommands: status, diff, log, show, branch (listing), blame, ls-files, rev-parse. Output is combined stdout and stderr with the exit code."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "args": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "Arguments after `git`, starting with the subcommand"
                }
            },
            "required": ["args"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: GitArgs = parse_arguments("git", arguments)?;
        check(&args.args).map_err(|message| ToolError::InvalidArguments {
            tool: "git".into(),
            message,
        })?;
        let mut command = Command::new("git");
        // Hardening the model cannot undo: no pager, no fsmonitor hook, no
        // external diff or textconv programs, no prompts, no index refresh
        // writes by `status`.
        let (sub, rest) = args.args.split_at(1);
        command
            .args(["--no-pager", "-c", "core.fsmonitor=false"])
            .args(sub)
            .args(hardening(&sub[0]))
            .args(rest)
            .current_dir(ctx.workspace.root())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_EXTERNAL_DIFF")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0");
        let (end, output) = run_in_group(command, GIT_TIMEOUT, &ctx.cancel, MAX_OUTPUT_BYTES)
            .await
            .map_err(|e| ToolError::Failed(format!("cannot run git: {e}")))?;
        match end {
            RunEnd::Exited(status) => {
                let mut text = output;
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&RunEnd::describe(&status));
                Ok(ToolOutput::text(text))
            }
            RunEnd::TimedOut => Err(ToolError::Failed(format!(
                "git timed out after {} s and was killed",
                GIT_TIMEOUT.as_secs()
            ))),
            RunEnd::Cancelled => Err(ToolError::Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with one commit; identity passed only to this setup.
    fn repo() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
                .args([
                    "-c",
                    "init.defaultBranch=main",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "-q", "-m", "first commit"]);
        std::fs::write(dir.path().join("a.txt"), "hello\nworld\n").unwrap();
        let ctx = ToolContext::for_dir(dir.path());
        (dir, ctx)
    }

    async fn git(ctx: &ToolContext, args: &[&str]) -> Result<String, String> {
        GitTool
            .execute(json!({ "args": args }), ctx)
            .await
            .map(|o| o.content)
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn runs_inspection_commands() {
        let (_dir, ctx) = repo();
        assert_eq!(
            git(&ctx, &["status", "--short"]).await.unwrap(),
            " M a.txt\nexit code: 0"
        );
        let log = git(&ctx, &["log", "--format=%s"]).await.unwrap();
        assert_eq!(log, "first commit\nexit code: 0");
        let diff = git(&ctx, &["diff"]).await.unwrap();
        assert!(diff.contains("+world\n"), "{diff}");
        let branches = git(&ctx, &["branch", "--list", "ma*"]).await.unwrap();
        assert_eq!(branches, "* main\nexit code: 0");
        let bad = git(&ctx, &["show", "no-such-rev"]).await.unwrap();
        assert!(bad.ends_with("exit code: 128"), "{bad}");
    }

    #[tokio::test]
    async fn refuses_writes_and_dangerous_options() {
        let (dir, ctx) = repo();
        let err = git(&ctx, &["commit", "-am", "x"]).await.unwrap_err();
        assert!(err.contains("git commit is not allowed"), "{err}");
        for args in [
            &["status", "-c", "core.pager=evil"][..],
            &["log", "--git-dir=/tmp"],
            &["diff", "--output=out.txt"],
            &["diff", "--no-index", "/etc/hostname", "a.txt"],
            &["status", "-C/tmp"],
            &["log", "--outp=x"],
            &["show", "--ext-diff"],
            &["blame", "--contents", "/etc/hostname", "a.txt"],
        ] {
            let err = git(&ctx, args).await.unwrap_err();
            assert!(
                err.contains("is not allowed in the git tool"),
                "{args:?}: {err}"
            );
        }
        let err = git(&ctx, &["branch", "feature"]).await.unwrap_err();
        assert!(err.contains("would create a branch"), "{err}");
        for args in [&["branch", "-D", "main"], &["branch", "--del", "main"]] {
            let err = git(&ctx, args).await.unwrap_err();
            assert!(err.contains("changes branches"), "{err}");
        }
        let err = git(&ctx, &[]).await.unwrap_err();
        assert!(err.contains("must start with a subcommand"), "{err}");
        assert!(!dir.path().join("out.txt").exists());
        let branches = git(&ctx, &["branch"]).await.unwrap();
        assert_eq!(branches, "* main\nexit code: 0");
    }
}
