//! How a rule's source is shown to people: the spec's public title, version and section, and
//! its public address where one exists.
//!
//! Inside wireprobe a rule names its spec by the file it was written from
//! (`001_1704fd641f081645.txt §Sequencing and Replay`): a stable key that tests check against
//! the file itself. Nobody reading a report has those files, so every report, `list` and SARIF
//! rule shows [`cite`]'s rendering instead.

use std::fmt;

/// One specification wireprobe checks against, as its authors publish it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecDocument {
    /// The internal key: the file name rules cite.
    pub file: &'static str,
    /// The title its authors give it.
    pub title: &'static str,
    /// The version the document states, if it states one.
    pub version: Option<&'static str>,
    /// Where it is published, if the document or its project names a public address.
    pub url: Option<&'static str>,
}

impl fmt::Display for SpecDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title)?;
        if let Some(version) = self.version {
            write!(f, " v{version}")?;
        }
        Ok(())
    }
}

/// The specifications. Versions are the ones each document states; addresses the ones
/// the document (HAIP) or its project's public repository (Nuum, HPD) gives.
pub const DOCUMENTS: &[SpecDocument] = &[
    SpecDocument {
        file: "ag-ui-1.1",
        title: "AG-UI Specification",
        version: Some("1.1"),
        url: Some("https://docs.ag-ui.com/spec/1.1"),
    },
    SpecDocument {
        file: "000_9be7860959b3b922.txt",
        title: "HUMA Event Protocol",
        version: Some("0.2.0"),
        url: None,
    },
    SpecDocument {
        file: "001_1704fd641f081645.txt",
        title: "Human-Agent Interaction Protocol (HAIP)",
        version: Some("1.1.2"),
        url: Some("https://haiprotocol.com/"),
    },
    SpecDocument {
        file: "002_32720a159e3ec1f9.txt",
        title: "UI–Agent–Executor Event Protocol (conceptual)",
        version: None,
        url: None,
    },
    SpecDocument {
        file: "003_d7769e1c0369e72c.txt",
        title: "Nuum Wire Protocol",
        version: None,
        url: Some("https://github.com/sanity-labs/nuum"),
    },
    SpecDocument {
        file: "004_194452bd36a9fc7f.txt",
        title: "HPD Agent Events",
        version: None,
        url: Some("https://github.com/HPD-AI/HPD-AI-Framework"),
    },
];

/// The document with this internal key.
pub fn document(file: &str) -> Option<&'static SpecDocument> {
    DOCUMENTS.iter().find(|d| d.file == file)
}

/// A rule's source as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// `Human-Agent Interaction Protocol (HAIP) v1.1.2 §Sequencing and Replay`.
    pub text: String,
    pub url: Option<&'static str>,
}

/// Renders an internal source (`FILE §SECTION`). A source whose file is not one of
/// [`DOCUMENTS`] (a test-only protocol's) is shown as it is.
pub fn cite(source: &str) -> Citation {
    let (file, section) = match source.split_once(" §") {
        Some((file, section)) => (file, Some(section)),
        None => (source, None),
    };
    let Some(doc) = document(file) else {
        return Citation {
            text: source.to_owned(),
            url: None,
        };
    };
    let text = match section {
        Some(section) => format!("{doc} §{section}"),
        None => doc.to_string(),
    };
    Citation { text, url: doc.url }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_file_is_cited_by_title_version_and_section() {
        let c = cite("001_1704fd641f081645.txt §Sequencing and Replay");
        assert_eq!(
            c.text,
            "Human-Agent Interaction Protocol (HAIP) v1.1.2 §Sequencing and Replay"
        );
        assert_eq!(c.url, Some("https://haiprotocol.com/"));
        assert_eq!(
            cite("002_32720a159e3ec1f9.txt §Common envelope").text,
            "UI–Agent–Executor Event Protocol (conceptual) §Common envelope"
        );
    }

    #[test]
    fn an_unknown_source_is_shown_as_it_is() {
        assert_eq!(cite("lines.txt §Framing").text, "lines.txt §Framing");
    }
}
