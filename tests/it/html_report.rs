//! The HTML report and the compliance matrix, opened in a real browser.
//!
//! `run --report html=PATH` against the builtin (with a fault, and clean) writes a page that
//! headless Chromium loads from disk: the title, the counts and the overall result are in the
//! rendered DOM, a failing case opens when a link points at it (the page's script ran), and a
//! screenshot is not blank. Without a browser on the machine these tests say so and pass,
//! unless `WIREPROBE_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs Debian's `chromium`)
//! makes a missing browser a failure. `WIREPROBE_SCREENSHOT_DIR=DIR` keeps the screenshots
//! (`scripts/report-screenshots.sh` writes the README's picture this way).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser to drive: `WIREPROBE_CHROMIUM`, else the first of the usual names on PATH.
fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WIREPROBE_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

/// The browser, or `None` after saying why this test checks nothing here.
fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let found = browser();
    if found.is_none() {
        assert!(
            std::env::var_os("WIREPROBE_REQUIRE_BROWSER").is_none(),
            "{test}: WIREPROBE_REQUIRE_BROWSER is set but no chromium is on PATH"
        );
        eprintln!("{test}: skipped, no chromium on PATH (apt-get install chromium)");
    }
    found
}

/// Runs headless Chromium on `url` with `args`; its standard output. Bounded: a browser that
/// hangs is killed and fails the test.
fn chromium(browser: &Path, profile: &Path, args: &[String], url: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match child.try_wait().expect("wait for chromium") {
            Some(status) => {
                assert!(status.success(), "chromium {args:?} {url}: {status}");
                break;
            }
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("chromium {args:?} {url} did not finish in 90 s");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    reader.join().expect("reader")
}

/// The DOM after the page's script ran.
fn rendered_dom(browser: &Path, profile: &Path, page: &Path, fragment: &str) -> String {
    let url = format!("file://{}#{fragment}", page.display());
    chromium(browser, profile, &["--dump-dom".into()], &url)
}

/// Takes a screenshot of `page` and checks it is a picture of something: a PNG of the window's
/// size, larger than a blank page compresses to (about 8 KB at this size).
fn screenshot(browser: &Path, profile: &Path, page: &Path, fragment: &str, name: &str) {
    let dir = std::env::var_os("WIREPROBE_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile.to_path_buf());
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    let png = dir.join(name);
    let url = format!("file://{}#{fragment}", page.display());
    chromium(
        browser,
        profile,
        &[
            "--window-size=1280,1600".into(),
            format!("--screenshot={}", png.display()),
        ],
        &url,
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", png.display());
    let width = u32::from_be_bytes(bytes[16..20].try_into().expect("IHDR"));
    let height = u32::from_be_bytes(bytes[20..24].try_into().expect("IHDR"));
    assert_eq!((width, height), (1280, 1600), "{}", png.display());
    assert!(
        bytes.len() > 40_000,
        "{}: {} bytes, a blank page",
        png.display(),
        bytes.len()
    );
}

/// `wireprobe run uae --target builtin ARGS --report html=… --report json=…`; the pages'
/// paths and the JSON report.
fn run_builtin(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, serde_json::Value) {
    let html = dir.join(format!("{name}.html"));
    let json = dir.join(format!("{name}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["run", "uae", "--target", "builtin", "--timeout-ms", "1500"])
        .args(args)
        .arg("--report")
        .arg(format!("html={}", html.display()))
        .arg("--report")
        .arg(format!("json={}", json.display()))
        .output()
        .expect("wireprobe runs");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {out:?}");
    let report =
        serde_json::from_slice(&std::fs::read(&json).expect("json written")).expect("json report");
    (html, report)
}

/// `<div … id="count-NAME"><b>N</b>` for every count of the report's summary.
fn assert_counts(dom: &str, report: &serde_json::Value) {
    for name in ["total", "pass", "fail", "warn", "info", "skip", "error"] {
        let n = &report["summary"][name];
        let shown = format!("id=\"count-{name}\"><b>{n}</b>");
        assert!(dom.contains(&shown), "{shown} not rendered");
    }
}

/// `text` as a browser writes a text node back out.
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn a_report_of_the_builtin_with_a_fault_renders_in_a_browser() {
    let Some(browser) = browser_or_skip("html report with a fault") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, report) = run_builtin(dir.path(), "uae-fault", &["--fault", "epoch-ts"]);
    let failing = report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["verdict"] == "fail")
        .and_then(|c| c["id"].as_str())
        .expect("the fault fails a case")
        .to_owned();

    let dom = rendered_dom(&browser, dir.path(), &page, &format!("case-{failing}"));
    assert!(dom.contains("<title>wireprobe uae report: builtin --fault epoch-ts"));
    assert_counts(&dom, &report);
    assert!(dom.contains("FAIL: exit 1."), "overall result");
    assert!(dom.contains("UI–Agent–Executor Event Protocol (conceptual)"));
    // The link opened the failing case: the page's script ran in the browser.
    let opened =
        format!("id=\"case-{failing}\" data-verdict=\"fail\" data-level=\"must\" open=\"\"");
    assert!(
        dom.contains(&opened),
        "{failing} was not opened:\n{dom:.2000}"
    );
    // Its violation is pinned under the frame that broke it.
    assert!(dom.contains("class=\"server violated\""));
    // Each rule shows the spec's own words under our statement of it.
    let env = wireprobe::protocol::get("uae")
        .and_then(|p| wireprobe::rules::find(p.rules(), "UAE-ENV-001"))
        .expect("UAE-ENV-001");
    let words = env.excerpts().next().expect("UAE-ENV-001 quotes its spec");
    let shown = format!("<blockquote class=\"spec\">{}", html_escape(words));
    assert!(dom.contains(&shown), "{shown} not rendered");

    screenshot(
        &browser,
        dir.path(),
        &page,
        "failing",
        "report-uae-fault.png",
    );
}

#[test]
fn a_clean_report_and_a_matrix_render_in_a_browser() {
    let Some(browser) = browser_or_skip("clean html report") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, report) = run_builtin(dir.path(), "uae-clean", &[]);
    let dom = rendered_dom(&browser, dir.path(), &page, "");
    assert!(dom.contains("<title>wireprobe uae report: builtin (ws://"));
    assert_counts(&dom, &report);
    assert!(dom.contains("PASS: exit 0."), "overall result");
    assert!(
        !dom.contains(" open=\"\""),
        "no case is open on a clean run"
    );
    screenshot(&browser, dir.path(), &page, "", "report-uae-clean.png");

    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let matrix = dir.path().join("matrix.html");
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["report", "matrix", "--format", "html", "-o"])
        .arg(&matrix)
        .args(
            [
                "uae-reference.json",
                "uae-epoch-ts.json",
                "uae-untraced-calls.json",
            ]
            .map(|f| runs.join(f)),
        )
        .output()
        .expect("wireprobe runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let dom = rendered_dom(&browser, dir.path(), &matrix, "");
    assert!(dom.contains("<th title=\"builtin --fault epoch-ts"));
    screenshot(&browser, dir.path(), &matrix, "", "matrix-uae.png");
}
