//! HTTP plumbing shared by the real providers: timeouts, retries, error
//! mapping, key redaction, and the driver that turns an SSE body into an
//! [`LlmStream`].
//!
//! Retries happen only while no chunk has been handed to the caller (on the
//! connection or the response status); once the body streams, a failure is an
//! `Err` item, because replaying a half-delivered answer would duplicate text.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde_json::Value;

use retry::{retry_after, retry_wait};
use status::classify_status;

use super::sse::{self, SseEvent};
use super::{LlmChunk, LlmError, LlmStream};
use crate::config::{ApiKey, ProviderConfig};

mod retry;
mod status;

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const DEFAULT_MAX_RETRIES: u32 = 2;
/// Error bodies are read up to this size; the message is what matters.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Builds a provider's errors: tags them with its name and scrubs its key
/// from every message. Cheap to clone into a stream decoder.
#[derive(Debug, Clone)]
pub(crate) struct ErrorContext {
    provider: String,
    api_key: Option<ApiKey>,
}

impl ErrorContext {
    /// Removes the API key from text that may echo it (error bodies, URLs).
    pub fn redact(&self, text: &str) -> String {
        match self.api_key.as_ref().map(ApiKey::expose) {
            Some(key) if !key.is_empty() => text.replace(key, "<redacted>"),
            _ => text.to_string(),
        }
    }

    pub fn protocol(&self, message: impl AsRef<str>) -> LlmError {
        LlmError::Protocol {
            provider: self.provider.clone(),
            message: self.redact(message.as_ref()),
        }
    }

    pub fn stream(&self, message: impl AsRef<str>) -> LlmError {
        LlmError::Stream {
            provider: self.provider.clone(),
            message: self.redact(message.as_ref()),
        }
    }

    pub fn transport(&self, message: impl AsRef<str>) -> LlmError {
        LlmError::Transport {
            provider: self.provider.clone(),
            message: self.redact(message.as_ref()),
        }
    }

    pub fn rate_limited(&self, status: u16, message: impl AsRef<str>) -> LlmError {
        LlmError::RateLimited {
            provider: self.provider.clone(),
            status,
            message: self.redact(message.as_ref()),
            retry_after_ms: None,
        }
    }

    /// A reqwest failure with its cause chain (the top-level message alone,
    /// e.g. "error sending request", does not say what went wrong).
    fn reqwest(&self, error: &reqwest::Error) -> LlmError {
        let mut message = if error.is_timeout() {
            format!("timed out: {error}")
        } else {
            error.to_string()
        };
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        self.transport(message)
    }
}

/// A provider's HTTP client with its retry policy and secret.
#[derive(Debug)]
pub(crate) struct HttpClient {
    errors: ErrorContext,
    client: reqwest::Client,
    max_retries: u32,
    timeout: Duration,
}

impl HttpClient {
    /// `timeout_ms` bounds connecting, waiting for the response head, and
    /// every silent gap while the body streams — not the whole stream, since
    /// a long generation may legitimately run for minutes.
    pub fn new(provider: &ProviderConfig) -> Result<Self, LlmError> {
        let errors = ErrorContext {
            provider: provider.name.clone(),
            api_key: provider.api_key.clone().filter(|k| !k.expose().is_empty()),
        };
        let timeout = Duration::from_millis(provider.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .build()
            .map_err(|e| errors.transport(format!("cannot build HTTP client: {e}")))?;
        Ok(Self {
            errors,
            client,
            max_retries: provider.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            timeout,
        })
    }

    pub fn errors(&self) -> &ErrorContext {
        &self.errors
    }

    pub fn api_key(&self) -> Option<&ApiKey> {
        self.errors.api_key.as_ref()
    }

    /// A header value holding the key, marked sensitive so it is never logged.
    pub fn secret_header(&self, value: &str) -> Result<HeaderValue, LlmError> {
        let mut header = HeaderValue::from_str(value).map_err(|_| LlmError::Auth {
            provider: self.errors.provider.clone(),
            status: 0,
            message: "the API key contains characters not allowed in an HTTP header".into(),
        })?;
        header.set_sensitive(true);
        Ok(header)
    }

    /// Joins base URL and path, checking the URL up front so a typo in the
    /// configuration fails when the client is built.
    pub fn endpoint(&self, base_url: &str, path: &str) -> Result<String, LlmError> {
        let url = format!("{}{path}", base_url.trim_end_matches('/'));
        reqwest::Url::parse(&url).map_err(|e| {
            self.errors
                .transport(format!("invalid base_url '{base_url}': {e}"))
        })?;
        Ok(url)
    }

    /// POSTs `body` as JSON and returns the successful response, retrying
    /// connection failures, 429, 529 and 5xx with exponential backoff.
    pub async fn post_json(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<reqwest::Response, LlmError> {
        let errors = &self.errors;
        let body =
            Bytes::from(serde_json::to_vec(body).map_err(|e| errors.protocol(e.to_string()))?);
        let mut attempt = 0;
        loop {
            let request = self
                .client
                .post(url)
                .headers(headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
            let (error, retry_after) =
                match tokio::time::timeout(self.timeout, request.send()).await {
                    Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                    Ok(Ok(response)) => {
                        let status = response.status().as_u16();
                        let retry_after = retry_after(response.headers(), SystemTime::now());
                        let text = errors.redact(&read_limited(response).await);
                        let error = classify_status(&errors.provider, status, retry_after, &text);
                        (error, retry_after)
                    }
                    Ok(Err(e)) if e.is_builder() => return Err(errors.reqwest(&e)),
                    Ok(Err(e)) => (errors.reqwest(&e), None),
                    Err(_) => {
                        let ms = self.timeout.as_millis();
                        (
                            errors.transport(format!("no response within {ms} ms")),
                            None,
                        )
                    }
                };
            if !error.is_retryable() || attempt >= self.max_retries {
                return Err(error);
            }
            let wait = retry_wait(attempt, retry_after);
            tracing::warn!(
                provider = %errors.provider,
                attempt = attempt + 1,
                wait_ms = wait.as_millis() as u64,
                error = %error,
                "retrying model call"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Streams the SSE body of `response` through a provider's `decoder`.
    pub fn llm_stream<D: EventDecoder>(
        &self,
        response: reqwest::Response,
        decoder: D,
    ) -> LlmStream {
        let errors = self.errors.clone();
        let events = sse::decode(Box::pin(response.bytes_stream()))
            .map(move |item| item.map_err(|e| errors.reqwest(&e)));
        drive(events, decoder)
    }
}

/// A provider's wire format, seen one SSE event at a time.
pub(crate) trait EventDecoder: Send + 'static {
    /// Interprets one event and returns the chunks it completes.
    fn on_event(&mut self, event: SseEvent) -> Result<Vec<LlmChunk>, LlmError>;
    /// True once the provider has signalled the end of the answer; the rest
    /// of the body is not read.
    fn is_done(&self) -> bool;
    /// The body ended (without `is_done`): flush or report a truncated answer.
    fn on_end(&mut self) -> Result<Vec<LlmChunk>, LlmError>;
}

/// Runs `decoder` over `events`; the stream ends after the first error.
pub(crate) fn drive<E, D>(events: E, decoder: D) -> LlmStream
where
    E: futures::Stream<Item = Result<SseEvent, LlmError>> + Send + 'static,
    D: EventDecoder,
{
    struct State<E, D> {
        events: std::pin::Pin<Box<E>>,
        decoder: D,
        ready: VecDeque<LlmChunk>,
        finished: bool,
    }
    let state = State {
        events: Box::pin(events),
        decoder,
        ready: VecDeque::new(),
        finished: false,
    };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(chunk) = st.ready.pop_front() {
                return Some((Ok(chunk), st));
            }
            if st.finished || st.decoder.is_done() {
                return None;
            }
            let result = match st.events.next().await {
                Some(Ok(event)) => st.decoder.on_event(event),
                Some(Err(error)) => Err(error),
                None => {
                    st.finished = true;
                    st.decoder.on_end()
                }
            };
            match result {
                Ok(chunks) => st.ready.extend(chunks),
                Err(error) => {
                    st.finished = true;
                    st.ready.clear();
                    return Some((Err(error), st));
                }
            }
        }
    }))
}

async fn read_limited(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= ERROR_BODY_LIMIT {
            body.truncate(ERROR_BODY_LIMIT);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_the_key() {
        let errors = ErrorContext {
            provider: "p".into(),
            api_key: Some(ApiKey::new("sk-secret")),
        };
        assert_eq!(errors.redact("bad sk-secret!"), "bad <redacted>!");
        let err = errors.protocol("echo sk-secret");
        assert!(!err.to_string().contains("sk-secret"));
    }
}
