//! A minimal PNG writer with no dependencies, so that the examples can save pictures a person
//! can open.
//!
//! PNG stores its pixels in a zlib stream. A zlib stream may hold *stored* (uncompressed)
//! deflate blocks, so no compressor is needed: the file is larger than a compressed one, but
//! every PNG reader accepts it. What a writer must compute is the CRC-32 of every chunk and the
//! Adler-32 of the pixel data, both done below.
//!
//! Format references: PNG (ISO/IEC 15948, W3C), zlib (RFC 1950), deflate (RFC 1951).
#![allow(dead_code)]

use std::io;
use std::path::Path;

/// The 8 bytes every PNG file starts with.
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
/// The largest payload of one stored deflate block (its length is a 16-bit field).
const MAX_STORED_BLOCK: usize = 65_535;

/// How the bytes of a pixel are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorType {
    /// One byte per pixel: 0 is black, 255 white.
    Gray,
    /// Three bytes per pixel: red, green, blue.
    Rgb,
}

impl ColorType {
    fn bytes_per_pixel(self) -> usize {
        match self {
            ColorType::Gray => 1,
            ColorType::Rgb => 3,
        }
    }

    /// The PNG `color type` field.
    fn code(self) -> u8 {
        match self {
            ColorType::Gray => 0,
            ColorType::Rgb => 2,
        }
    }
}

/// CRC-32 (ISO-HDLC, the one of PNG, zip and Ethernet): reflected polynomial `0xEDB88320`.
pub fn crc32(bytes: &[u8]) -> u32 {
    // The 256-entry table is built on each call; a picture has only 3 chunks.
    let mut table = [0u32; 256];
    for (n, entry) in table.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *entry = c;
    }
    let mut crc = !0u32;
    for &b in bytes {
        crc = table[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Adler-32 (RFC 1950), the checksum ending a zlib stream.
pub fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the longest run for which `b` cannot overflow a u32 before the reduction.
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += byte as u32;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// `data` as a zlib stream made of stored (uncompressed) deflate blocks.
pub fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let blocks = data.len().div_ceil(MAX_STORED_BLOCK).max(1);
    let mut out = Vec::with_capacity(2 + data.len() + 5 * blocks + 4);
    // CMF = 0x78 (deflate, 32 KiB window), FLG = 0x01 (no dictionary, fastest level), chosen
    // so that CMF * 256 + FLG is a multiple of 31 as RFC 1950 requires.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(MAX_STORED_BLOCK).peekable();
    if chunks.peek().is_none() {
        // An empty stream still needs one (final, empty) block.
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        // Block header: BFINAL in bit 0, BTYPE = 00 (stored); then LEN and its complement NLEN,
        // little-endian, then the bytes as they are.
        out.push(u8::from(last));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// Appends one PNG chunk: length, type, data, CRC-32 of type and data.
fn push_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Encodes a `width` × `height` 8-bit image whose pixels are given row by row, top row first.
///
/// # Panics
/// If `pixels` does not hold exactly `width * height` pixels of `color`, or a side is 0.
pub fn encode(width: usize, height: usize, color: ColorType, pixels: &[u8]) -> Vec<u8> {
    assert!(width > 0 && height > 0, "a PNG image needs at least one pixel");
    let row_bytes = width * color.bytes_per_pixel();
    assert_eq!(pixels.len(), row_bytes * height, "pixel data does not match {width}x{height}");

    // IHDR: width, height, bit depth 8, color type, compression 0, filter 0, no interlace.
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&(width as u32).to_be_bytes());
    header.extend_from_slice(&(height as u32).to_be_bytes());
    header.extend_from_slice(&[8, color.code(), 0, 0, 0]);

    // Every scanline is preceded by its filter type; 0 means "none".
    let mut raw = Vec::with_capacity((row_bytes + 1) * height);
    for row in pixels.chunks(row_bytes) {
        raw.push(0);
        raw.extend_from_slice(row);
    }

    let mut png = SIGNATURE.to_vec();
    push_chunk(&mut png, b"IHDR", &header);
    push_chunk(&mut png, b"IDAT", &zlib_stored(&raw));
    push_chunk(&mut png, b"IEND", &[]);
    png
}

/// Writes a grid of cells as a grayscale PNG: each cell becomes a `scale` × `scale` square,
/// `cell_color(x, y)` its gray level; a thin light line separates cells when `scale >= 4` so
/// that single points are easy to count.
pub fn write_grid(
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
    std::fs::write(path, encode(w, h, ColorType::Gray, &pixels))
}
