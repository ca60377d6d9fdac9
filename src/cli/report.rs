//! `wireprobe report`: render a saved JSON report in another format, or compare two saved runs,
//! so CI can keep the JSON of every run and render or gate later.

use super::args::{MatrixFormat, ReportArgs, ReportCommand};
use super::{usage, Failure, EXIT_OK};
use anyhow::{anyhow, Context};
use std::path::Path;
use std::path::PathBuf;
use wireprobe::report::{self, diff::Diff, matrix, merge, Report};

pub fn report(args: ReportArgs) -> Result<u8, Failure> {
    match args.command {
        Some(ReportCommand::Diff { old, new, strict }) => {
            let old = read(&old).map_err(usage)?;
            let new = read(&new).map_err(usage)?;
            let diff = Diff::of(&old, &new, strict);
            print!("{}", diff.render());
            Ok(diff.exit_code())
        }
        Some(ReportCommand::Matrix {
            runs,
            format,
            output,
            labels,
            absent,
        }) => {
            let labels = pairs(&labels, "--label", "STEM=TEXT").map_err(usage)?;
            let mut columns = runs
                .iter()
                .map(|path| {
                    let name = column_name(path, &runs);
                    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                    let label = labels.iter().find(|(s, _)| Some(s) == stem.as_ref());
                    Ok(matrix::Column {
                        name: label.map_or(name, |(_, text)| text.clone()),
                        shown: matrix::Shown::Run {
                            report: Box::new(read(path)?),
                            page: page_beside(path, output.as_deref()),
                        },
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(usage)?;
            let absent = pairs(&absent, "--absent", "NAME=WHY").map_err(usage)?;
            columns.extend(absent.into_iter().map(|(name, why)| matrix::Column {
                name,
                shown: matrix::Shown::Absent(why),
            }));
            let text = match format {
                MatrixFormat::Html => matrix::html(&columns),
                MatrixFormat::Markdown => matrix::markdown(&columns),
            };
            write_out(output.as_deref(), &text).map_err(usage)?;
            Ok(EXIT_OK)
        }
        Some(ReportCommand::Merge { shards, output }) => {
            let read_all = shards
                .iter()
                .map(|path| Ok((path.display().to_string(), read(path)?)))
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(usage)?;
            let merged = merge::merge(read_all).map_err(|e| usage(e.into()))?;
            let text = report::render(&merged, report::Format::Json, false);
            write_out(output.as_deref(), &text).map_err(usage)?;
            Ok(EXIT_OK)
        }
        None => {
            let file = args.file.ok_or_else(|| {
                usage(anyhow!(
                    "report needs a saved JSON report (report FILE.json --format F -o PATH), or diff OLD NEW"
                ))
            })?;
            let saved = read(&file).map_err(usage)?;
            let target = report::ReportTarget {
                format: args.format,
                path: args.output,
            };
            let write = report::WriteOptions {
                strict: args.strict,
                transcripts: args.transcripts,
            };
            report::write_all(&saved, &[target], write)
                .context("writing the report")
                .map_err(usage)?;
            Ok(EXIT_OK)
        }
    }
}

/// Writes `text` to `output` (standard output when `None`).
fn write_out(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    report::emit(output, text).with_context(|| {
        let to = output.unwrap_or(Path::new("-"));
        format!("cannot write {}", to.display())
    })
}

/// A run's column name: its file's stem, or its whole path when another run has the same stem.
fn column_name(path: &Path, all: &[PathBuf]) -> String {
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    let own = stem(path).unwrap_or_else(|| path.display().to_string());
    let shared = all
        .iter()
        .filter(|p| stem(p).as_deref() == Some(&own))
        .count()
        > 1;
    if shared {
        path.display().to_string()
    } else {
        own
    }
}

/// `KEY=VALUE` options, split; one without `=` is a usage error naming the option.
fn pairs(given: &[String], option: &str, form: &str) -> anyhow::Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|g| {
            g.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| anyhow!("{option} takes {form}, not {g:?}"))
        })
        .collect()
}

/// The run's own HTML report, when one is saved beside its JSON (`NAME.html` by `NAME.json`),
/// as the matrix written to `output` reaches it: relative to the matrix's directory when the
/// page is under it, else as given.
fn page_beside(json: &Path, output: Option<&Path>) -> Option<String> {
    let page = json.with_extension("html");
    if !page.is_file() {
        return None;
    }
    let out_dir = output.and_then(Path::parent).unwrap_or(Path::new(""));
    let shown = match page.strip_prefix(out_dir) {
        Ok(relative) if output.is_some() => relative,
        _ => &page,
    };
    Some(shown.to_string_lossy().replace('\\', "/"))
}

/// A JSON report as `run --report json=PATH` wrote it.
fn read(path: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| {
        format!(
            "{} is not a wireprobe JSON report (write one with run --report json=PATH)",
            path.display()
        )
    })
}
