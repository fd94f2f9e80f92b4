//! Points of lines by expansion — the comprehension paper's section 5.
//!
//! Every line expands into as many points as it has steps along its longer axis, so a set of
//! lines of very different lengths is one irregular comprehension:
//!
//! ```text
//! par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)]
//! ```
//!
//! `par!` flattens it: it computes every line's size first, then hands out the points in equal
//! shares to the cores, whatever the lengths of the lines.
//!
//! ```text
//! cargo run --release --example lines                     # the paper's 6 lines, 70x30, lines.png
//! cargo run --release --example lines -- out.png          # write the picture elsewhere
//! cargo run --release --example lines -- --random 200     # 200 random lines on a 400x300 grid
//! ```

#[path = "support/lines.rs"]
mod lines;
#[path = "support/timing.rs"]
mod timing;

use lines::{get_point_in_line, points_in_line, Line, Point};
use parcomp::par;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Size of the grid random lines are drawn on.
const RANDOM_WIDTH: i32 = 400;
const RANDOM_HEIGHT: i32 = 300;
/// Grids wider than this are not printed as text (they would wrap in a terminal).
const MAX_TEXT_WIDTH: usize = 120;

fn main() {
    let (lines, width, height, path) = parse_args();

    // The comprehension of the paper: one point per (line, step along the line).
    let start = Instant::now();
    let points: Vec<Point> =
        par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)];
    let elapsed = start.elapsed();

    println!("points of lines by expansion (comprehension paper, section 5)");
    println!("  par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)]");
    println!();
    println!(
        "{} lines on a {width}x{height} grid -> {} points (duplicates included) in {}",
        lines.len(),
        points.len(),
        timing::fmt_duration(elapsed)
    );
    for (k, &line) in lines.iter().enumerate().take(8) {
        println!(
            "  line {k}: {:?} -> {:?}, {} points: {}",
            line.0,
            line.1,
            points_in_line(line),
            // The first points of this line: the comprehension yields lines in order.
            timing::abbreviate(&points_of(&lines, &points, k), 3)
        );
    }
    if lines.len() > 8 {
        println!("  … and {} more lines", lines.len() - 8);
    }
    println!();

    let grid = lines::rasterize(&points, width, height);
    if width <= MAX_TEXT_WIDTH {
        println!("the drawing ('#' a point, '.' none; row 0 at the top):");
        for row in lines::grid_rows(&grid, '#', '.') {
            println!("  {row}");
        }
        println!();
    }

    // A picture: each cell is a square of `scale` pixels, points black on white.
    let scale = if width <= 100 { 8 } else { 2 };
    let written = write_grid(&path, width, height, scale, |x, y| if grid[y][x] { 0 } else { 255 });
    match written {
        Ok(()) => println!(
            "wrote {} ({}x{} pixels, {scale}x{scale} per cell)",
            path.display(),
            width * scale,
            height * scale
        ),
        Err(e) => {
            eprintln!("could not write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}

/// Writes a grid of cells as an 8-bit grayscale PNG: each cell becomes a `scale` × `scale`
/// square, `cell_color(x, y)` its gray level (0 black, 255 white); a thin light line separates
/// cells when `scale >= 4` so that single points are easy to count.
fn write_grid(
    path: &Path,
    width: usize,
    height: usize,
    scale: usize,
    cell_color: impl Fn(usize, usize) -> u8,
) -> io::Result<()> {
    let (w, h) = (width * scale, height * scale);
    let mut pixels = vec![0u8; w * h];
    for py in 0..h {
        for px in 0..w {
            let (x, y) = (px / scale, py / scale);
            let border = scale >= 4 && (px % scale == 0 || py % scale == 0);
            let value = cell_color(x, y);
            // The separating line is drawn only over background (light) cells.
            pixels[py * w + px] = if border && value > 128 { 220 } else { value };
        }
    }
    let side = |n: usize| u32::try_from(n).map_err(|_| io::Error::other("image too large"));
    let mut encoder = png::Encoder::new(BufWriter::new(File::create(path)?), side(w)?, side(h)?);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(())
}

/// The points the comprehension produced for line `k` (they are contiguous, in line order).
fn points_of(lines: &[Line], points: &[Point], k: usize) -> Vec<Point> {
    let start: usize = lines[..k].iter().map(|&l| points_in_line(l) as usize).sum();
    points[start..start + points_in_line(lines[k]) as usize].to_vec()
}

/// `[PATH] [--random N]`: the lines to draw, the grid size and where to write the picture.
fn parse_args() -> (Vec<Line>, usize, usize, PathBuf) {
    let mut path = PathBuf::from("lines.png");
    let mut random = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--random" {
            let n = args.next().and_then(|n| n.parse::<usize>().ok());
            match n {
                Some(n) => random = Some(n),
                None => usage("--random needs a number of lines"),
            }
        } else if arg == "-h" || arg == "--help" {
            usage("");
        } else if arg.starts_with('-') {
            usage(&format!("unknown option {arg}"));
        } else {
            path = PathBuf::from(arg);
        }
    }
    match random {
        // Random lines, reproducible: the seed is fixed.
        Some(n) => (
            lines::random_lines(n, RANDOM_WIDTH, RANDOM_HEIGHT, 2019),
            RANDOM_WIDTH as usize,
            RANDOM_HEIGHT as usize,
            path,
        ),
        // The 6 lines of tests/data/reference.json "points_of_lines" (the reference drawing
        // made with the paper's Futhark code), on its 70x30 grid.
        None => {
            (lines::REFERENCE_LINES.to_vec(), lines::REFERENCE_WIDTH, lines::REFERENCE_HEIGHT, path)
        }
    }
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("error: {problem}");
    }
    eprintln!("usage: lines [PATH.png] [--random N]");
    std::process::exit(if problem.is_empty() { 0 } else { 2 });
}
