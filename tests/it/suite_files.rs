//! Suite files: the bundled suite loads and cites real spec sections; broken suite files are
//! refused with the file, case and step named.

use wireprobe::protocol::{self, Protocol};
use wireprobe::suite::{self, loader};

fn haip() -> &'static dyn Protocol {
    protocol::get("haip").expect("haip is registered")
}

fn load_err(toml: &str) -> String {
    loader::load_texts(haip(), &[("bad.toml".into(), toml.into())])
        .expect_err("must be refused")
        .to_string()
}

#[test]
fn bundled_suite_loads() {
    let s = suite::load_bundled(haip()).expect("loads");
    assert!(s.cases.len() >= 70);
}

/// Protocols whose specs head their sections with markdown `#` lines.
const MARKDOWN_SPECS: &[&str] = &["haip", "nuum"];

#[test]
fn on_disk_suites_match_the_bundled_ones() {
    for p in protocol::all() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("suites")
            .join(p.id());
        let client_dir = dir.join("client");
        let sides = [
            (dir, suite::load_bundled(*p).expect("loads")),
            (client_dir, suite::load_bundled_client(*p).expect("loads")),
        ];
        for (dir, bundled) in sides {
            let on_disk = match dir.exists() {
                true => suite::load_path(*p, &dir).expect("loads").cases,
                false => Vec::new(),
            };
            let mut a: Vec<_> = on_disk.iter().map(|c| c.id.clone()).collect();
            let mut b: Vec<_> = bundled.cases.iter().map(|c| c.id.clone()).collect();
            a.sort();
            b.sort();
            assert_eq!(
                a,
                b,
                "every {}/*.toml file must be listed in the bundle",
                dir.display()
            );
        }
    }
}

#[test]
fn every_rule_cites_a_real_section_of_its_spec() {
    let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs");
    for id in MARKDOWN_SPECS {
        let p = protocol::get(id).expect("registered");
        let Ok(text) = std::fs::read_to_string(specs.join(p.spec_file())) else {
            eprintln!("skipped: {} not found", specs.display());
            return;
        };
        let headings: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .collect();
        for rule in p.rules() {
            let (file, section) = rule.source.split_once(" §").expect("FILE §Section");
            assert_eq!(file, p.spec_file(), "{}", rule.id);
            assert!(
                headings.contains(&section),
                "{} cites §{section:?}, not a heading of {file}",
                rule.id
            );
        }
    }
}

#[test]
fn broken_suites_are_refused_with_their_location() {
    let e =
        load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-NOPE-1\"]\nsteps = []\n");
    assert!(
        e.contains("bad.toml: case `x`") && e.contains("unknown rule `HAIP-NOPE-1`"),
        "{e}"
    );
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ sned = {} }]\n");
    assert!(
        e.starts_with("bad.toml:5: case `x`") && e.contains("no action in step"),
        "{e}"
    );
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ send = {}, times = 1e9 }]\n");
    assert!(
        e.starts_with("bad.toml:5: case `x`") && e.contains("times"),
        "{e}"
    );
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = []\ncolour = 1\n");
    assert!(
        e.starts_with("bad.toml:6: case `x`")
            && e.contains("unknown field `colour`")
            && e.contains("`title`, `rules`"),
        "{e}"
    );
    // A key a step kind does not take names the line and the keys it does.
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [\n  { send = {} },\n  { expect = { type = \"PONG\" }, within = 5 },\n]\n");
    assert!(
        e.starts_with("bad.toml:7: case `x`")
            && e.contains("unknown field `within`")
            && e.contains("`within_ms`")
            && e.contains("`rule`"),
        "{e}"
    );
    // A step rule the protocol does not know: counted from 1, fallback steps after the main ones.
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ wait = { ms = 1 } }]\nfallback = [{ wait = { ms = 1 }, rule = \"HAIP-NOPE\" }]\n");
    assert!(
        e.contains("case `x` step 2") && e.contains("unknown rule `HAIP-NOPE`"),
        "{e}"
    );
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = []\n[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = []\n");
    assert!(e.contains("duplicate case id"), "{e}");
    let e = load_err("this is = = not toml");
    assert!(e.starts_with("bad.toml:1: "), "{e}");
    let e = load_err("[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ expect = { type = \"PONG\" }, scenario = true, probe = true }]\n");
    assert!(e.contains("scenario or a probe"), "{e}");
}

#[test]
fn every_huma_rule_cites_a_section_line_of_its_spec() {
    use wireprobe::protocol::huma;
    let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs");
    let Ok(text) = std::fs::read_to_string(specs.join(huma::SPEC_FILE)) else {
        eprintln!("skipped: {} not found", specs.display());
        return;
    };
    for rule in huma::rules::RULES {
        let (file, section) = rule.source.split_once(" §").expect("FILE §Section");
        assert_eq!(file, huma::SPEC_FILE, "{}", rule.id);
        assert!(
            text.lines().any(|l| l.trim() == section),
            "{} cites §{section:?}, not a line of {file}",
            rule.id
        );
    }
}

#[test]
fn every_bundled_case_survives_a_round_trip_through_the_writer() {
    use wireprobe::suite::writer;
    for p in protocol::all() {
        let bundled = suite::load_bundled(*p).expect("loads");
        for case in &bundled.cases {
            let text = writer::case_to_toml(case).expect("writes");
            let again = loader::load_texts(*p, &[("w.toml".into(), text.clone())])
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", case.id));
            let back = &again.cases[0];
            assert_eq!(back.steps, case.steps, "{}\n{text}", case.id);
            assert_eq!(
                (&back.id, &back.rules, back.handshake, back.timeout_ms),
                (&case.id, &case.rules, case.handshake, case.timeout_ms),
                "{}",
                case.id
            );
            assert_eq!(
                (&back.requires, &back.handshake_with, back.connect),
                (&case.requires, &case.handshake_with, case.connect),
                "{}\n{text}",
                case.id
            );
        }
    }
}

#[test]
fn nulls_are_written_as_a_marker_and_read_back() {
    use wireprobe::suite::model::{Send, Step, Times};
    use wireprobe::suite::writer;
    let mut case = suite::load_bundled(haip()).expect("loads").cases[0].clone();
    let event = serde_json::json!({"type": "PING", "payload": {"nonce": null, "x": [null, 1.5]}});
    case.steps = vec![Step::new(Send {
        event: event.clone(),
        times: Times::Fixed(1),
    })];
    let text = writer::case_to_toml(&case).expect("writes");
    let back = loader::load_texts(haip(), &[("w.toml".into(), text.clone())]).expect("loads");
    assert_eq!(back.cases[0].steps, case.steps, "{text}");
}

#[test]
fn reconnect_tokens_and_code_rules_load_and_round_trip() {
    use wireprobe::suite::model::{Action, TokenKind};
    use wireprobe::suite::writer;
    let text = r#"
[[case]]
id = "x.reconnect-token"
title = "t"
rules = ["HAIP-AUTH-004", "HAIP-ENV-008"]
handshake_with = { payload = { capabilities = { binary_frames = false } } }
steps = [
  { reconnect = { token = "expired", handshake = "send", new_session = true } },
  { expect_refused = {} },
  { expect_error = { code = "UNSUPPORTED_TYPE", code_rule = "HAIP-ENV-008" } },
]
"#;
    let loaded = loader::load_texts(haip(), &[("t.toml".into(), text.into())]).expect("loads");
    let case = &loaded.cases[0];
    assert!(matches!(
        &case.steps[0].action,
        Action::Reconnect(r) if r.how.token == Some(TokenKind::Expired)
    ));
    assert!(matches!(
        &case.steps[2].action,
        Action::ExpectError(e) if e.wanted.code_rule.as_deref() == Some("HAIP-ENV-008")
    ));
    let again = writer::case_to_toml(case).expect("writes");
    let back = loader::load_texts(haip(), &[("w.toml".into(), again.clone())]).expect("loads");
    assert_eq!(back.cases[0].steps, case.steps, "{again}");
    assert_eq!(back.cases[0].handshake_with, case.handshake_with, "{again}");
    // A code rule without a code to judge is a mistake in the suite.
    let bad = text.replace(r#"code = "UNSUPPORTED_TYPE", "#, "");
    let err = loader::load_texts(haip(), &[("t.toml".into(), bad)]).expect_err("refused");
    assert!(err.to_string().contains("code_rule"), "{err}");
}

#[test]
fn every_protocol_cites_its_spec_by_public_title_not_file_name() {
    for p in protocol::all() {
        let doc = wireprobe::citation::document(p.spec_file())
            .unwrap_or_else(|| panic!("{}: no public title for {}", p.id(), p.spec_file()));
        for rule in p.rules() {
            let cited = wireprobe::citation::cite(rule.source).text;
            assert!(
                cited.starts_with(doc.title) && !cited.contains(".txt"),
                "{}: {cited}",
                rule.id
            );
        }
    }
}

/// The pages of a spec the repository keeps verbatim (`suites/PROTOCOL/spec/`, AG-UI's), each
/// with its text; `None` for a protocol whose spec is one of `../shared/specs/`.
fn vendored_pages(p: &dyn Protocol) -> Option<Vec<(std::path::PathBuf, String)>> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("readable")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "mdx") {
                let text = std::fs::read_to_string(&path).expect("a page");
                out.push((path, text));
            }
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("suites")
        .join(p.id())
        .join("spec");
    if !dir.is_dir() {
        return None;
    }
    let mut pages = Vec::new();
    walk(&dir, &mut pages);
    Some(pages)
}

#[test]
fn every_vendored_spec_rule_cites_a_page_title_and_a_heading_of_that_page() {
    let mut checked = 0;
    for p in protocol::all() {
        let Some(pages) = vendored_pages(*p) else {
            continue;
        };
        for rule in p.rules() {
            let (file, section) = rule.source.split_once(" §").expect("FILE §Section");
            assert_eq!(file, p.spec_file(), "{}", rule.id);
            let (title, heading) = section
                .split_once(" › ")
                .unwrap_or_else(|| panic!("{}: §{section} is not `Page › Heading`", rule.id));
            let page = pages
                .iter()
                .find(|(_, text)| text.contains(&format!("title: \"{title}\"")))
                .unwrap_or_else(|| panic!("{}: no page is titled {title:?}", rule.id));
            assert!(
                page.1
                    .lines()
                    .any(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == heading),
                "{}: {} has no heading {heading:?}",
                rule.id,
                page.0.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no protocol keeps its spec in the repository");
}

/// `text` with every run of whitespace one space: a spec's line breaks are not its words.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_rule_quotes_its_spec_verbatim() {
    use wireprobe::rules::FACTS_PREFIX;
    let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs");
    let Ok(facts) = std::fs::read_to_string(specs.join("README.md")) else {
        eprintln!("skipped: {} not found", specs.display());
        return;
    };
    let facts = words(&facts);
    let mut unquoted = Vec::new();
    for p in protocol::all() {
        let spec = match vendored_pages(*p) {
            Some(pages) => words(
                &pages
                    .iter()
                    .map(|(_, text)| text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            None => words(&std::fs::read_to_string(specs.join(p.spec_file())).expect("spec")),
        };
        for rule in p.rules() {
            if rule.excerpts().next().is_none() {
                unquoted.push(rule.id);
            }
            for excerpt in rule.excerpts() {
                let (source, said) = match excerpt.strip_prefix(FACTS_PREFIX) {
                    Some(fact) => (&facts, fact),
                    None => (&spec, excerpt),
                };
                assert!(
                    source.contains(&words(said)),
                    "{} quotes words its source does not hold: {said:?}",
                    rule.id
                );
            }
        }
    }
    assert!(
        unquoted.is_empty(),
        "rules without the spec's words: {unquoted:?}"
    );
}

/// A suite text as the JSON document a schema validator (and an editor) sees.
fn as_json(text: &str) -> serde_json::Value {
    let table: toml::Table = toml::from_str(text).expect("TOML");
    serde_json::to_value(table).expect("JSON")
}

#[test]
fn every_bundled_suite_file_matches_the_suite_schema() {
    let schema = suite::file_schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for p in protocol::all() {
        let files = p.bundled_suite().iter().chain(p.descriptor().client_suite);
        for (name, text) in files {
            let errors: Vec<String> = validator
                .iter_errors(&as_json(text))
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "suites/{}/{name}: {errors:#?}", p.id());
        }
    }
    // The schema refuses what the loader refuses: a key no step kind takes, a second kind.
    for bad in [
        "[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ expect = { type = \"PONG\" }, within = 5 }]\n",
        "[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = [{ send = {}, wait = { ms = 1 } }]\n",
        "[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = []\nsteps = []\n",
        "[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"HAIP-PING-001\"]\nsteps = []\ncolour = 1\n",
    ] {
        assert!(!validator.is_valid(&as_json(bad)), "the schema took {bad}");
        assert!(load_err(bad).contains("bad.toml:"), "the loader took {bad}");
    }
}

#[test]
fn the_bundled_schema_file_is_what_the_types_derive() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/suite.schema.json");
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("suites/suite.schema.json"))
            .expect("JSON");
    assert_eq!(
        on_disk,
        suite::file_schema(),
        "suites/suite.schema.json is stale: `wireprobe list --suite-schema > suites/suite.schema.json`"
    );
}
