//! Units: the smallest pieces packed into chunks (paragraphs, sentences, or word runs).

use unicode_segmentation::UnicodeSegmentation;

use super::Section;

/// A trimmed byte range of the source and its token count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    pub start: usize,
    pub end: usize,
    pub tokens: usize,
}

/// Tokens as the chunker counts them: non-whitespace word-boundary segments.
pub fn count_tokens(text: &str) -> usize {
    text.split_word_bounds()
        .filter(|w| !w.trim().is_empty())
        .count()
}

/// Splits a section into units of at most `max_tokens` tokens: paragraphs first, sentences
/// for over-long paragraphs, word runs for over-long sentences.
pub fn split_units(source: &str, section: &Section, max_tokens: usize) -> Vec<Unit> {
    let mut units = Vec::new();
    for (start, end) in paragraphs(source, section.start, section.end) {
        let tokens = count_tokens(&source[start..end]);
        if tokens <= max_tokens {
            units.push(Unit { start, end, tokens });
            continue;
        }
        for (s_off, sentence) in source[start..end].split_sentence_bound_indices() {
            let Some((s, e)) = trimmed(source, start + s_off, start + s_off + sentence.len())
            else {
                continue;
            };
            let tokens = count_tokens(&source[s..e]);
            if tokens <= max_tokens {
                units.push(Unit {
                    start: s,
                    end: e,
                    tokens,
                });
            } else {
                split_words(source, s, e, max_tokens, &mut units);
            }
        }
    }
    units
}

/// Paragraphs: ranges separated by blank lines, trimmed, never empty.
fn paragraphs(source: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut para_start = start;
    let mut pos = start;
    let mut blank_run = false;
    for line in source[start..end].split_inclusive('\n') {
        let is_blank = line.trim().is_empty();
        if is_blank && !blank_run {
            out.extend(trimmed(source, para_start, pos));
        }
        if !is_blank && blank_run {
            para_start = pos;
        }
        blank_run = is_blank;
        pos += line.len();
    }
    if !blank_run {
        out.extend(trimmed(source, para_start, end));
    }
    out
}

/// Runs of at most `max_tokens` tokens, cut at word boundaries.
fn split_words(source: &str, start: usize, end: usize, max_tokens: usize, out: &mut Vec<Unit>) {
    let mut run_start: Option<usize> = None;
    let mut run_end = start;
    let mut tokens = 0;
    for (off, word) in source[start..end].split_word_bound_indices() {
        if word.trim().is_empty() {
            continue;
        }
        if tokens == max_tokens {
            out.push(Unit {
                start: run_start.unwrap_or(start),
                end: run_end,
                tokens,
            });
            run_start = None;
            tokens = 0;
        }
        run_start.get_or_insert(start + off);
        run_end = start + off + word.len();
        tokens += 1;
    }
    if let Some(s) = run_start {
        out.push(Unit {
            start: s,
            end: run_end,
            tokens,
        });
    }
}

/// The range without leading and trailing whitespace, or `None` if nothing is left.
fn trimmed(source: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let slice = &source[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let body = slice.trim();
    (!body.is_empty()).then(|| (start + lead, start + lead + body.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(source: &str) -> Section {
        Section {
            path: vec![],
            start: 0,
            end: source.len(),
        }
    }

    #[test]
    fn counts_words_and_punctuation() {
        assert_eq!(count_tokens("Hello, world!"), 4);
        assert_eq!(count_tokens("   "), 0);
    }

    #[test]
    fn paragraphs_split_on_blank_lines() {
        let s = "one\ntwo\n\n \nthree\n";
        let units = split_units(s, &whole(s), 100);
        let texts: Vec<&str> = units.iter().map(|u| &s[u.start..u.end]).collect();
        assert_eq!(texts, vec!["one\ntwo", "three"]);
    }

    #[test]
    fn long_paragraphs_split_into_sentences() {
        let s = "First sentence here. Second sentence here. Third one.";
        let units = split_units(s, &whole(s), 4);
        let texts: Vec<&str> = units.iter().map(|u| &s[u.start..u.end]).collect();
        assert_eq!(
            texts,
            vec![
                "First sentence here.",
                "Second sentence here.",
                "Third one."
            ]
        );
    }
}
