//! `web_fetch`: GET a URL and return its content as text.
//!
//! Bounded on both axes a remote server controls: the body is read only up to
//! `max_bytes` (the connection is dropped past it, so an endless response
//! costs nothing more) and the whole exchange has a deadline. HTML is reduced
//! to readable text; binary content is refused rather than fed to the model.

use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

pub const DEFAULT_FETCH_MAX_BYTES: usize = 200_000;
pub const MAX_FETCH_MAX_BYTES: usize = 5_000_000;
pub const DEFAULT_FETCH_TIMEOUT_MS: u64 = 30_000;
pub const MAX_FETCH_TIMEOUT_MS: u64 = 120_000;
/// Column width HTML is laid out to.
const TEXT_WIDTH: usize = 100;

#[derive(Debug)]
pub struct WebFetchTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebFetchArgs {
    url: String,
    max_bytes: Option<usize>,
    timeout_ms: Option<u64>,
}

/// How a body is turned into text, decided from its media type.
#[derive(Debug, PartialEq)]
enum Kind {
    Html,
    Text,
    /// No content type: decided by looking at the bytes.
    Unknown,
    Binary,
}

fn classify(content_type: &str) -> Kind {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "" => Kind::Unknown,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql" => Kind::Text,
        m if m.starts_with("text/") || m.ends_with("+json") || m.ends_with("+xml") => Kind::Text,
        _ => Kind::Binary,
    }
}

impl WebFetchArgs {
    fn validate(self) -> Result<(Url, usize, Duration), String> {
        let url = Url::parse(&self.url).map_err(|e| format!("invalid url {}: {e}", self.url))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "only http and https urls are supported, not {}",
                url.scheme()
            ));
        }
        let max_bytes = self.max_bytes.unwrap_or(DEFAULT_FETCH_MAX_BYTES);
        if !(1..=MAX_FETCH_MAX_BYTES).contains(&max_bytes) {
            return Err(format!(
                "max_bytes must be between 1 and {MAX_FETCH_MAX_BYTES}"
            ));
        }
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_FETCH_TIMEOUT_MS);
        if !(1..=MAX_FETCH_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(format!(
                "timeout_ms must be between 1 and {MAX_FETCH_TIMEOUT_MS}"
            ));
        }
        Ok((url, max_bytes, Duration::from_millis(timeout_ms)))
    }
}

/// Fetches at most `max_bytes` of the body; returns the final URL, the
/// content type, the bytes and whether the body was cut.
async fn fetch(
    url: Url,
    max_bytes: usize,
    timeout: Duration,
) -> Result<(Url, String, Vec<u8>, bool), ToolError> {
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            ToolError::Failed(format!(
                "fetching {url} timed out after {} ms",
                timeout.as_millis()
            ))
        } else {
            ToolError::Failed(format!("fetching {url} failed: {e}"))
        }
    };
    let mut builder = reqwest::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("a3s-code/", env!("CARGO_PKG_VERSION")));
    // A proxy cannot reach this machine's loopback interface.
    let loopback = url.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if loopback {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(failed)?;
    let mut response = client.get(url.clone()).send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(ToolError::Failed(format!(
            "fetching {url} failed: HTTP {status}"
        )));
    }
    let final_url = response.url().clone();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    if classify(&content_type) == Kind::Binary {
        return Err(ToolError::Failed(format!(
            "{final_url} is binary content ({content_type}); only text and HTML can be fetched"
        )));
    }
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        let room = max_bytes - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            // Exactly full: cut unless the body is known to end here
            // (hyper reports the remaining length of a sized body).
            truncated = chunk.len() > room || response.content_length() != Some(0);
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok((final_url, content_type, body, truncated))
}

#[async_trait::async_trait]
impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "web_fetch"
    }

    fn description(&self) -> &str {
        "Fetch a URL with HTTP(S) GET. HTML is converted to plain text; other text (JSON, plain, XML...) is returned as is; binary content is refused. The body is cut at max_bytes (default 200000) and the request is abandoned after timeout_ms (default 30000)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "http:// or https:// URL"},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_FETCH_MAX_BYTES, "description": "Maximum body bytes to read (default 200000)"},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_FETCH_TIMEOUT_MS, "description": "Time limit for the whole request in milliseconds (default 30000)"}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: WebFetchArgs = parse_arguments("web_fetch", arguments)?;
        let (url, max_bytes, timeout) =
            args.validate()
                .map_err(|message| ToolError::InvalidArguments {
                    tool: "web_fetch".into(),
                    message,
                })?;
        let shown = url.to_string();
        // reqwest's timeout covers the exchange; this one also bounds DNS
        // and anything else around it.
        let (final_url, content_type, body, truncated) = tokio::select! {
            result = tokio::time::timeout(timeout, fetch(url, max_bytes, timeout)) => result
                .map_err(|_| ToolError::Failed(format!(
                    "fetching {shown} timed out after {} ms", timeout.as_millis()
                )))??,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };

        let kind = match classify(&content_type) {
            Kind::Unknown if body.contains(&0) => {
                return Err(ToolError::Failed(format!(
                    "{final_url} is binary content; only text and HTML can be fetched"
                )))
            }
            Kind::Unknown => {
                let start =
                    String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
                if start.trim_start().starts_with("<!doctype html") || start.contains("<html") {
                    Kind::Html
                } else {
                    Kind::Text
                }
            }
            kind => kind,
        };
        let text = if kind == Kind::Html {
            html2text::from_read(body.as_slice(), TEXT_WIDTH).map_err(|e| {
                ToolError::Failed(format!("cannot convert the HTML of {final_url}: {e}"))
            })?
        } else {
            String::from_utf8_lossy(&body).into_owned()
        };
        let mut out = format!("URL: {final_url}\nContent-Type: {content_type}\n\n{text}");
        if truncated {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!(
                "... [truncated: stopped reading after {max_bytes} bytes]\n"
            ));
        }
        Ok(ToolOutput::text(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A minimal HTTP/1.1 server on 127.0.0.1 answering by path.
    async fn server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        let n = socket.read(&mut buf).await.unwrap();
                        if n == 0 {
                            return;
                        }
                        request.extend_from_slice(&buf[..n]);
                    }
                    let request = String::from_utf8_lossy(&request);
                    let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let send = |ct: &str, body: &[u8]| {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend_from_slice(body);
                        r
                    };
                    let response = match path.as_str() {
                        "/page" => send("text/html; charset=utf-8", b"<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Heading</h1><p>Hello <b>world</b></p><script>var secret=1;</script></body></html>"),
                        "/json" => send("application/json", br#"{"a": 1}"#),
                        "/image" => send("image/png", b"\x89PNG\r\n\x1a\n\0\0"),
                        "/endless" => {
                            socket.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n").await.unwrap();
                            let chunk = vec![b'a'; 8192];
                            while socket.write_all(&chunk).await.is_ok() {}
                            return;
                        }
                        "/slow" => {
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
                    };
                    let _ = socket.write_all(&response).await;
                });
            }
        });
        format!("http://{addr}")
    }

    async fn fetch(args: Value) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::for_dir(dir.path());
        WebFetchTool
            .execute(args, &ctx)
            .await
            .map(|o| o.content)
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn html_becomes_text_and_json_is_returned_as_is() {
        let base = server().await;
        let out = fetch(json!({"url": format!("{base}/page")})).await.unwrap();
        assert!(
            out.starts_with(&format!("URL: {base}/page\nContent-Type: text/html")),
            "{out}"
        );
        assert!(
            out.contains("Heading") && out.contains("Hello **world**"),
            "{out}"
        );
        assert!(
            !out.contains("<p>") && !out.contains("secret") && !out.contains("color:red"),
            "{out}"
        );
        let out = fetch(json!({"url": format!("{base}/json")})).await.unwrap();
        assert!(out.ends_with("\n\n{\"a\": 1}"), "{out}");
    }

    #[tokio::test]
    async fn stops_reading_at_max_bytes() {
        let base = server().await;
        let args =
            json!({"url": format!("{base}/endless"), "max_bytes": 5000, "timeout_ms": 10000});
        let out = fetch(args).await.unwrap();
        let body = out.split("\n\n").nth(1).unwrap();
        assert!(body.starts_with(&"a".repeat(5000)) && !body.starts_with(&"a".repeat(5001)));
        assert!(
            out.ends_with("... [truncated: stopped reading after 5000 bytes]\n"),
            "{out}"
        );
    }

    #[tokio::test]
    async fn times_out_refuses_binary_and_reports_http_errors() {
        let base = server().await;
        let err = fetch(json!({"url": format!("{base}/slow"), "timeout_ms": 300}))
            .await
            .unwrap_err();
        assert!(err.contains("timed out after 300 ms"), "{err}");
        let err = fetch(json!({"url": format!("{base}/image")}))
            .await
            .unwrap_err();
        assert!(err.contains("binary content (image/png)"), "{err}");
        let err = fetch(json!({"url": format!("{base}/missing")}))
            .await
            .unwrap_err();
        assert!(err.ends_with("HTTP 404 Not Found"), "{err}");
    }

    #[tokio::test]
    async fn rejects_bad_arguments() {
        for (args, message) in [
            (json!({"url": "file:///etc/passwd"}), "only http and https"),
            (json!({"url": "not a url"}), "invalid url"),
            (
                json!({"url": "http://127.0.0.1/", "max_bytes": 0}),
                "max_bytes",
            ),
            (
                json!({"url": "http://127.0.0.1/", "timeout_ms": 999999}),
                "timeout_ms",
            ),
            (json!({"uri": "http://127.0.0.1/"}), "unknown field"),
        ] {
            let err = fetch(args).await.unwrap_err();
            assert!(err.contains(message), "{err}");
        }
    }
}
