//! Headless Chromium for tests of the HTML report: whether it is here (a
//! failure instead when DBMETER_REQUIRE_CHROMIUM is set, as on CI), a page
//! loaded with nothing from the network, and the pixels of a colour in a
//! screenshot.

use super::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium's path; None after saying that the test skips (a failure
/// instead with DBMETER_REQUIRE_CHROMIUM set).
pub fn chromium() -> Option<PathBuf> {
    dbmeter_testkit::tools::CHROMIUM.find_or_skip()
}

pub fn headless(browser: &Path, s: &Scratch, extra: &[&str], page: &Path) -> std::process::Output {
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
pub fn screenshot(browser: &Path, s: &Scratch, page: &Path, width: u32, height: u32) -> PathBuf {
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
