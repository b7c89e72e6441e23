//! Embeds `scenarios/*.json` and `expected-failures.txt` into the runner so
//! it finds them from any working directory. Generates `embedded.rs` in
//! `OUT_DIR` with one `include_str!` per file, sorted by file name.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let scenarios = manifest.join("scenarios");
    let baseline = manifest.join("expected-failures.txt");
    println!("cargo:rerun-if-changed={}", scenarios.display());
    println!("cargo:rerun-if-changed={}", baseline.display());

    let mut files: Vec<PathBuf> = match fs::read_dir(&scenarios) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();

    let mut code = String::from("/// `(file name, contents)` of every embedded scenario.\n");
    code.push_str("pub static SCENARIOS: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n\n/// The embedded expected-failures baseline, if the file exists.\n");
    if baseline.is_file() {
        writeln!(
            code,
            "pub static BASELINE: Option<&str> = Some(include_str!({:?}));",
            baseline.display().to_string()
        )
        .unwrap();
    } else {
        code.push_str("pub static BASELINE: Option<&str> = None;\n");
    }

    let out = Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("embedded.rs");
    fs::write(out, code).expect("write embedded.rs");
}
