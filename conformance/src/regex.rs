//! A small backtracking regular expression engine for the `$regex` pattern
//! operator, so the runner needs no dependency beyond the workspace's.
//!
//! Supported syntax (a subset of Rust's `regex`, same meaning):
//!
//! - literals, `.` (any character but `\n`), `^` and `$` (start and end of
//!   the whole text);
//! - classes `[abc]`, `[a-z]`, `[^ ]`, with escapes inside;
//! - escapes `\d \D \w \W \s \S` (digits are ASCII), `\n \t \r`, and any
//!   escaped punctuation (`\. \/ \[ \\` ...);
//! - groups `(...)`, `(?:...)` and named groups `(?P<name>...)` /
//!   `(?<name>...)`, alternation `|`;
//! - quantifiers `* + ? {n} {n,} {n,m}`, greedy or lazy (`*?` ...).
//!
//! Anything else (e.g. `\b`, look-around, flags) is rejected when parsing, so
//! a pattern never means something other than what it says. A search finds
//! the leftmost match, preferring earlier alternatives and, for greedy
//! quantifiers, longer repetitions. Matching gives up after a fixed number of
//! steps rather than running away on pathological patterns.

use std::cell::Cell;

/// Steps a search may take before it gives up with an error.
const STEP_BUDGET: usize = 20_000_000;

#[derive(Debug, Clone)]
pub struct Regex {
    root: Node,
    /// Name of each capture slot, in opening order.
    names: Vec<String>,
}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class {
        items: Vec<ClassItem>,
        negated: bool,
    },
    Start,
    End,
    Group {
        node: Box<Node>,
        slot: Option<usize>,
    },
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: usize,
        max: Option<usize>,
        greedy: bool,
    },
}

#[derive(Debug, Clone)]
enum ClassItem {
    Range(char, char),
    /// `\d`, `\w`, `\s` (the `bool` is true for the negated `\D` ...).
    Perl(char, bool),
}

type Slots = Vec<Option<(usize, usize)>>;

impl Regex {
    pub fn new(source: &str) -> Result<Regex, String> {
        let mut parser = Parser {
            chars: source.chars().collect(),
            at: 0,
            names: Vec::new(),
        };
        let root = parser.alternation()?;
        if parser.at < parser.chars.len() {
            return Err(format!("unmatched ')' at {}", parser.at));
        }
        Ok(Regex {
            root,
            names: parser.names,
        })
    }

    /// The first (leftmost) match in `text`: `Ok(None)` when there is none,
    /// else the named groups that took part, as `(name, matched text)`.
    pub fn captures(&self, text: &str) -> Result<Option<Vec<(String, String)>>, String> {
        let chars: Vec<char> = text.chars().collect();
        let matcher = Matcher {
            text: &chars,
            steps: Cell::new(0),
        };
        for start in 0..=chars.len() {
            let mut slots: Slots = vec![None; self.names.len()];
            let mut found = None;
            if matcher.go(&self.root, start, &mut slots, &mut |_, slots| {
                found = Some(slots.clone());
                true
            }) {
                let slots = found.unwrap_or_default();
                let named = self
                    .names
                    .iter()
                    .zip(slots)
                    .filter_map(|(name, slot)| {
                        let (a, b) = slot?;
                        Some((name.clone(), chars[a..b].iter().collect()))
                    })
                    .collect();
                return Ok(Some(named));
            }
            if matcher.steps.get() > STEP_BUDGET {
                return Err(format!("gave up after {STEP_BUDGET} steps"));
            }
        }
        Ok(None)
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    names: Vec<String>,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        self.at += usize::from(found);
        found
    }

    fn next(&mut self) -> Result<char, String> {
        let c = self.peek().ok_or("unexpected end of pattern")?;
        self.at += 1;
        Ok(c)
    }

    fn alternation(&mut self) -> Result<Node, String> {
        let mut options = vec![self.concat()?];
        while self.eat('|') {
            options.push(self.concat()?);
        }
        Ok(match options.len() {
            1 => options.pop().unwrap_or(Node::Empty),
            _ => Node::Alt(options),
        })
    }

    fn concat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn atom(&mut self) -> Result<Node, String> {
        let at = self.at;
        Ok(match self.next()? {
            '(' => self.group()?,
            '[' => self.class()?,
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '\\' => match self.escape()? {
                ClassItem::Range(c, _) => Node::Char(c),
                perl => Node::Class {
                    items: vec![perl],
                    negated: false,
                },
            },
            '*' | '+' | '?' | '{' => return Err(format!("nothing to repeat at {at}")),
            c => Node::Char(c),
        })
    }

    fn group(&mut self) -> Result<Node, String> {
        let mut slot = None;
        if self.eat('?') && !self.eat(':') {
            if self.eat('<') || (self.eat('P') && self.eat('<')) {
                let mut name = String::new();
                loop {
                    match self.next()? {
                        '>' => break,
                        c if c.is_ascii_alphanumeric() || c == '_' => name.push(c),
                        c => return Err(format!("bad character {c:?} in a group name")),
                    }
                }
                if name.is_empty() || self.names.contains(&name) {
                    return Err(format!("group name {name:?} is empty or repeated"));
                }
                slot = Some(self.names.len());
                self.names.push(name);
            } else {
                return Err(format!("unsupported group syntax at {}", self.at));
            }
        }
        let node = self.alternation()?;
        if !self.eat(')') {
            return Err("unclosed group".into());
        }
        Ok(Node::Group {
            node: Box::new(node),
            slot,
        })
    }

    fn class(&mut self) -> Result<Node, String> {
        let negated = self.eat('^');
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let c = self.next().map_err(|_| "unclosed character class")?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let item = if c == '\\' {
                self.escape()?
            } else {
                ClassItem::Range(c, c)
            };
            let item = match item {
                ClassItem::Range(lo, _)
                    if self.peek() == Some('-') && self.chars.get(self.at + 1) != Some(&']') =>
                {
                    self.at += 1;
                    let hi = match self.next()? {
                        '\\' => match self.escape()? {
                            ClassItem::Range(hi, _) => hi,
                            ClassItem::Perl(..) => return Err("bad range in a class".into()),
                        },
                        hi => hi,
                    };
                    if hi < lo {
                        return Err(format!("range {lo}-{hi} is out of order"));
                    }
                    ClassItem::Range(lo, hi)
                }
                other => other,
            };
            items.push(item);
        }
        Ok(Node::Class { items, negated })
    }

    /// After a backslash: a literal (as a one-character range) or a class.
    fn escape(&mut self) -> Result<ClassItem, String> {
        let c = self.next()?;
        Ok(match c {
            'd' | 'w' | 's' => ClassItem::Perl(c, false),
            'D' | 'W' | 'S' => ClassItem::Perl(c.to_ascii_lowercase(), true),
            'n' => ClassItem::Range('\n', '\n'),
            't' => ClassItem::Range('\t', '\t'),
            'r' => ClassItem::Range('\r', '\r'),
            c if c.is_ascii_punctuation() || c == ' ' => ClassItem::Range(c, c),
            c => return Err(format!("unsupported escape \\{c}")),
        })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = if self.eat('*') {
            (0, None)
        } else if self.eat('+') {
            (1, None)
        } else if self.eat('?') {
            (0, Some(1))
        } else if self.eat('{') {
            self.counted()?
        } else {
            return Ok(atom);
        };
        let greedy = !self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return Err(format!("nested repetition at {}", self.at));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    /// `n}`, `n,}` or `n,m}`, after the `{`.
    fn counted(&mut self) -> Result<(usize, Option<usize>), String> {
        let min = self.number()?;
        let max = if !self.eat(',') {
            Some(min)
        } else if self.peek() == Some('}') {
            None
        } else {
            Some(self.number()?)
        };
        if !self.eat('}') || max.is_some_and(|m| m < min) {
            return Err("bad {n,m} repetition".into());
        }
        Ok((min, max))
    }

    fn number(&mut self) -> Result<usize, String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        digits
            .parse()
            .map_err(|_| "expected a number in {n,m}".into())
    }
}

struct Matcher<'t> {
    text: &'t [char],
    steps: Cell<usize>,
}

type Next<'k> = &'k mut dyn FnMut(usize, &mut Slots) -> bool;

impl Matcher<'_> {
    /// Whether `node` matches at `pos` and the continuation `k` accepts
    /// where it ends.
    fn go(&self, node: &Node, pos: usize, slots: &mut Slots, k: Next<'_>) -> bool {
        self.steps.set(self.steps.get() + 1);
        if self.steps.get() > STEP_BUDGET {
            return false;
        }
        match node {
            Node::Empty => k(pos, slots),
            Node::Start => pos == 0 && k(pos, slots),
            Node::End => pos == self.text.len() && k(pos, slots),
            Node::Char(_) | Node::Any | Node::Class { .. } => {
                self.single(node, pos) && k(pos + 1, slots)
            }
            Node::Group { node, slot: None } => self.go(node, pos, slots, k),
            Node::Group {
                node,
                slot: Some(i),
            } => self.go(node, pos, slots, &mut |end, slots| {
                let old = slots[*i];
                slots[*i] = Some((pos, end));
                k(end, slots) || {
                    slots[*i] = old;
                    false
                }
            }),
            Node::Concat(items) => self.seq(items, pos, slots, k),
            Node::Alt(options) => options.iter().any(|o| self.go(o, pos, slots, k)),
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } if matches!(**node, Node::Char(_) | Node::Any | Node::Class { .. }) => {
                // One character per repetition: no recursion per character.
                let limit = max.unwrap_or(usize::MAX);
                let mut n = 0;
                while n < limit && self.single(node, pos + n) {
                    n += 1;
                }
                if n < *min {
                    return false;
                }
                if *greedy {
                    (*min..=n).rev().any(|count| k(pos + count, slots))
                } else {
                    (*min..=n).any(|count| k(pos + count, slots))
                }
            }
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => self.repeat(node, (*min, *max, *greedy), 0, pos, slots, k),
        }
    }

    fn single(&self, node: &Node, pos: usize) -> bool {
        let Some(&c) = self.text.get(pos) else {
            return false;
        };
        match node {
            Node::Char(want) => c == *want,
            Node::Any => c != '\n',
            Node::Class { items, negated } => {
                items.iter().any(|item| in_class(item, c)) != *negated
            }
            _ => false,
        }
    }

    fn seq(&self, items: &[Node], pos: usize, slots: &mut Slots, k: Next<'_>) -> bool {
        match items.split_first() {
            None => k(pos, slots),
            Some((first, rest)) => self.go(first, pos, slots, &mut |p, slots| {
                self.seq(rest, p, slots, k)
            }),
        }
    }

    fn repeat(
        &self,
        node: &Node,
        bounds: (usize, Option<usize>, bool),
        count: usize,
        pos: usize,
        slots: &mut Slots,
        k: Next<'_>,
    ) -> bool {
        let (min, max, greedy) = bounds;
        let can_more = max.is_none_or(|m| count < m);
        let done = count >= min;
        if !greedy && done && k(pos, slots) {
            return true;
        }
        // An empty repetition only counts towards the minimum, so `(a*)*`
        // cannot loop forever.
        if can_more
            && self.go(node, pos, slots, &mut |p, slots| {
                (p != pos || count < min) && self.repeat(node, bounds, count + 1, p, slots, k)
            })
        {
            return true;
        }
        greedy && done && k(pos, slots)
    }
}

fn in_class(item: &ClassItem, c: char) -> bool {
    match *item {
        ClassItem::Range(lo, hi) => lo <= c && c <= hi,
        ClassItem::Perl(kind, negated) => {
            let hit = match kind {
                'd' => c.is_ascii_digit(),
                'w' => c.is_alphanumeric() || c == '_',
                _ => c.is_whitespace(),
            };
            hit != negated
        }
    }
}

#[cfg(test)]
#[path = "regex_tests.rs"]
mod tests;
