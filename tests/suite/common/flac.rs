//! A minimal FLAC writer for silence: every frame is one CONSTANT subframe, so hours of audio
//! fit in a few kilobytes (the shape of a decompression bomb).

/// Samples per frame: the largest block size FLAC can express.
const BLOCK: u64 = 65_535;

/// A mono 16-bit FLAC file at `rate` Hz (8 or 16 kHz) holding `seconds` of silence, with the
/// true total in STREAMINFO.
pub fn silent_flac(seconds: u64, rate: u32) -> Vec<u8> {
    silent_flac_declaring(seconds, rate, seconds * u64::from(rate))
}

/// Like [`silent_flac`], but STREAMINFO declares `declared_samples` (0: unknown).
pub fn silent_flac_declaring(seconds: u64, rate: u32, declared_samples: u64) -> Vec<u8> {
    let rate_code = match rate {
        8_000 => 0b0100,
        16_000 => 0b0101,
        other => panic!("no frame-header code for {other} Hz in this writer"),
    };
    let total = seconds * u64::from(rate);
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]); // last metadata block, STREAMINFO, 34 bytes
    let block = BLOCK.min(total.max(16)) as u16;
    out.extend_from_slice(&block.to_be_bytes());
    out.extend_from_slice(&block.to_be_bytes());
    out.extend_from_slice(&[0; 6]); // frame sizes unknown
    let packed = (u64::from(rate) << 44) | (15 << 36) | (declared_samples & ((1 << 36) - 1));
    out.extend_from_slice(&packed.to_be_bytes());
    out.extend_from_slice(&[0; 16]); // no MD5
    let mut frame_number = 0u64;
    let mut left = total;
    while left > 0 {
        let size = left.min(BLOCK);
        out.extend_from_slice(&frame(frame_number, size as u16, rate_code));
        left -= size;
        frame_number += 1;
    }
    out
}

fn frame(number: u64, size: u16, rate_code: u8) -> Vec<u8> {
    // Sync, fixed block size; 16-bit block size at the end of the header; mono, 16 bits.
    let mut frame = vec![0xFF, 0xF8, 0b0111_0000 | rate_code, 0b0000_1000];
    frame.extend_from_slice(&utf8_number(number));
    frame.extend_from_slice(&(size - 1).to_be_bytes());
    frame.push(crc8(&frame));
    frame.extend_from_slice(&[0, 0, 0]); // CONSTANT subframe, value 0
    let crc = crc16(&frame);
    frame.extend_from_slice(&crc.to_be_bytes());
    frame
}

/// FLAC's "UTF-8" coding of frame numbers.
fn utf8_number(n: u64) -> Vec<u8> {
    let bytes = match n {
        0..=0x7F => return vec![n as u8],
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        0x1_0000..=0x1F_FFFF => 4,
        0x20_0000..=0x3FF_FFFF => 5,
        0x400_0000..=0x7FFF_FFFF => 6,
        _ => 7,
    };
    let mut out = vec![0u8; bytes];
    let mut rest = n;
    for byte in out[1..].iter_mut().rev() {
        *byte = 0x80 | (rest & 0x3F) as u8;
        rest >>= 6;
    }
    out[0] = !(0xFFu8 >> bytes) | rest as u8;
    out
}

fn crc8(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |mut crc, &b| {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ 0x07
            } else {
                crc << 1
            };
        }
        crc
    })
}

fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |mut crc, &b| {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x8005
            } else {
                crc << 1
            };
        }
        crc
    })
}
