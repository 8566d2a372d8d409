//! Markdown sections: headings start a section whose path is the heading breadcrumb.

/// A byte range of the source that belongs under one heading breadcrumb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub path: Vec<String>,
    pub start: usize,
    pub end: usize,
}

/// Splits at ATX headings (`#` .. `######`) outside fenced code blocks. Text before the first
/// heading is a section with an empty path. Plain text is a single section.
pub fn split_sections(source: &str) -> Vec<Section> {
    let mut sections = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new(); // (level, title)
    let mut current_start = 0;
    let mut current_path: Vec<String> = Vec::new();
    let mut in_fence = false;
    let mut line_start = 0;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else if !in_fence {
            if let Some((level, title)) = heading(line) {
                if line_start > current_start {
                    sections.push(Section {
                        path: current_path.clone(),
                        start: current_start,
                        end: line_start,
                    });
                }
                stack.retain(|(l, _)| *l < level);
                stack.push((level, title));
                current_path = stack.iter().map(|(_, t)| t.clone()).collect();
                current_start = line_start;
            }
        }
        line_start += line.len();
    }
    if source.len() > current_start {
        sections.push(Section {
            path: current_path,
            start: current_start,
            end: source.len(),
        });
    }
    sections
}

/// `## Title ##` → (2, "Title"). At most three leading spaces, as in CommonMark.
fn heading(line: &str) -> Option<(usize, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t', '\n', '\r'])) {
        return None;
    }
    let title = after.trim().trim_end_matches('#').trim_end().to_string();
    if title.is_empty() {
        return None;
    }
    Some((level, title))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_one_section() {
        let s = split_sections("just text\nmore");
        assert_eq!(s.len(), 1);
        assert!(s[0].path.is_empty());
    }

    #[test]
    fn heading_rules() {
        assert_eq!(heading("# A\n"), Some((1, "A".into())));
        assert_eq!(heading("### B ###"), Some((3, "B".into())));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("    # indented code"), None);
        assert_eq!(heading("####### seven"), None);
    }

    #[test]
    fn sibling_headings_replace_each_other() {
        let s = split_sections("# A\nx\n## B\ny\n## C\nz\n# D\nw");
        let paths: Vec<String> = s.iter().map(|s| s.path.join(" > ")).collect();
        assert_eq!(paths, vec!["A", "A > B", "A > C", "D"]);
    }
}
