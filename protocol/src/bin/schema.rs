//! Writes the protocol's JSON Schema and OpenRPC files into a directory
//! (default `protocol/schema`), removing stale ones.

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "protocol/schema".into());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let files = a3s_code_protocol::schema::render();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name.ends_with(".json") && !files.contains_key(&name) {
            std::fs::remove_file(&path)?;
        }
    }
    for (name, text) in &files {
        std::fs::write(dir.join(name), text)?;
    }
    eprintln!("wrote {} files to {}", files.len(), dir.display());
    Ok(())
}
