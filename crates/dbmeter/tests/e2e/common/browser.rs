//! Headless Chromium for tests of the HTML report: whether it is here (a
//! failure instead when DBMETER_REQUIRE_CHROMIUM is set, as on CI), a page
//! loaded with nothing from the network, and the pixels of a colour in a
//! screenshot.

use super::Scratch;
use std::path::Path;
use std::process::Command;

pub fn chromium() -> Option<&'static str> {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
    }
    if std::env::var_os("DBMETER_REQUIRE_CHROMIUM").is_some() {
        panic!("DBMETER_REQUIRE_CHROMIUM is set, but chromium is not installed");
    }
    eprintln!("skipping the rendering: chromium not found");
    None
}

pub fn headless(browser: &str, s: &Scratch, extra: &[&str], page: &Path) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            // Nothing may come from the network: the page must stand alone.
            "--proxy-server=127.0.0.1:9",
        ])
        .arg(format!(
            "--user-data-dir={}",
            s.path("chromium-profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium")
}

/// Pixels of colour `rgb` (within a small tolerance) in a PNG.
pub fn pixels_of(png_file: &Path, rgb: (u8, u8, u8)) -> usize {
    let decoder = png::Decoder::new(std::fs::File::open(png_file).expect("open screenshot"));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    let step = info.color_type.samples();
    assert!(step >= 3, "colour screenshot expected");
    buf[..info.buffer_size()]
        .chunks(step)
        .filter(|p| {
            (p[0] as i32 - rgb.0 as i32).abs() < 12
                && (p[1] as i32 - rgb.1 as i32).abs() < 12
                && (p[2] as i32 - rgb.2 as i32).abs() < 12
        })
        .count()
}

/// A screenshot of `page` in a `width` x `height` window, as a PNG in the
/// scratch directory; the browser must succeed.
pub fn screenshot(
    browser: &str,
    s: &Scratch,
    page: &Path,
    width: u32,
    height: u32,
) -> std::path::PathBuf {
    let shot = s.path("shot.png");
    let out = headless(
        browser,
        s,
        &[
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", shot.display()),
        ],
        page,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    shot
}
