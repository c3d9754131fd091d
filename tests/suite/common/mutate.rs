//! A structure-aware mutator for audio files: it finds the chunks, boxes, elements, pages and
//! blocks of a container (WAV, AIFF, CAF, MP4/M4A/MOV, Matroska/WebM, Ogg, FLAC, MP3) and
//! damages them where demuxers trust the file: length and count fields set to 0, 1, just short
//! of or past the end, the field's maximum or a negative value; units duplicated, dropped,
//! swapped or cut short; 0xFF runs over a unit's start. Ogg pages get their checksums mended
//! so the damage reaches the demuxer behind the page check.
//!
//! Shared by the decoding property tests (`tests/audio_decode_fuzz.rs`), the HTTP upload tests
//! and the coverage-guided fuzz targets (`fuzz/fuzz_targets/`), which include this file.

/// A number in the file that says how long or how many.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub at: usize,
    pub encoding: Encoding,
}

/// How a [`Field`] is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Encoding {
    /// An unsigned integer of this many bytes, big-endian.
    Be(usize),
    /// An unsigned integer of this many bytes, little-endian.
    Le(usize),
    /// A signed 64-bit big-endian integer (CAF chunk sizes).
    I64Be,
    /// An EBML variable-length integer of this many bytes (Matroska element sizes).
    Vint(usize),
}

/// One chunk, box, element, page or block: `start..end` including its header.
#[derive(Debug, Clone)]
pub struct Unit {
    pub start: usize,
    pub end: usize,
    /// Where its header's length and count fields are.
    pub fields: Vec<Field>,
}

/// A small deterministic random source, so that a seed reproduces a mutation.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            0
        } else {
            (self.next() % bound as u64) as usize
        }
    }
}

/// Applies one to three structural mutations chosen by `seed`, keeping the file under
/// `max_len` bytes. Returns false where no structure was found (the bytes are left alone).
pub fn mutate(bytes: &mut Vec<u8>, seed: u64, max_len: usize) -> bool {
    let mut rng = Rng::new(seed);
    let rounds = 1 + rng.below(3);
    let mut changed = false;
    for _ in 0..rounds {
        let units = units(bytes);
        if units.is_empty() {
            break;
        }
        let unit = &units[rng.below(units.len())];
        changed |= mutate_unit(bytes, &units, unit, &mut rng, max_len);
    }
    if changed {
        mend_ogg_checksums(bytes);
    }
    changed
}

fn mutate_unit(
    bytes: &mut Vec<u8>,
    units: &[Unit],
    unit: &Unit,
    rng: &mut Rng,
    max_len: usize,
) -> bool {
    let len = unit.end - unit.start;
    match rng.below(10) {
        0..=3 if !unit.fields.is_empty() => {
            let field = unit.fields[rng.below(unit.fields.len())];
            let to_end = bytes.len().saturating_sub(field.at);
            let value = boundary_value(field.encoding, to_end, len, rng);
            write_field(bytes, field, value)
        }
        4 if bytes.len() + len <= max_len => {
            let copy = bytes[unit.start..unit.end].to_vec();
            let at = if rng.below(2) == 0 {
                unit.end
            } else {
                units[rng.below(units.len())].start
            };
            bytes.splice(at..at, copy);
            true
        }
        5 => {
            bytes.drain(unit.start..unit.end);
            true
        }
        6 => {
            let cut = unit.start + rng.below(len.max(1));
            bytes.truncate(cut);
            true
        }
        7 => {
            let run = 1 + rng.below(len.clamp(1, 4096));
            let fill = if rng.below(2) == 0 { 0xFF } else { 0x00 };
            let end = (unit.start + run).min(bytes.len());
            bytes[unit.start..end].fill(fill);
            true
        }
        8 => {
            // Swap the unit with the next one that does not overlap it.
            let Some(next) = units.iter().find(|u| u.start >= unit.end) else {
                return false;
            };
            let (a, b) = (unit.start..unit.end, next.start..next.end);
            let mut swapped = bytes[..a.start].to_vec();
            swapped.extend_from_slice(&bytes[b.clone()]);
            swapped.extend_from_slice(&bytes[a.end..b.start]);
            swapped.extend_from_slice(&bytes[a]);
            swapped.extend_from_slice(&bytes[b.end..]);
            *bytes = swapped;
            true
        }
        _ => {
            // A few bits flipped inside the unit's header.
            let header = len.clamp(1, 16);
            for _ in 0..1 + rng.below(3) {
                let at = (unit.start + rng.below(header)).min(bytes.len().saturating_sub(1));
                if let Some(byte) = bytes.get_mut(at) {
                    *byte ^= 1 << rng.below(8);
                }
            }
            true
        }
    }
}

/// A value that demuxers get wrong: small, just around the unit's or the file's end, the
/// field's maximum, or (signed) negative.
fn boundary_value(encoding: Encoding, to_end: usize, unit_len: usize, rng: &mut Rng) -> i128 {
    let max = match encoding {
        Encoding::Be(n) | Encoding::Le(n) => (1i128 << (8 * n)) - 1,
        Encoding::I64Be => i64::MAX as i128,
        Encoding::Vint(n) => (1i128 << (7 * n)) - 1,
    };
    let candidates = [
        0,
        1,
        7,
        8,
        unit_len as i128 - 1,
        unit_len as i128 + 1,
        to_end as i128,
        to_end as i128 + 1,
        max,
        max - 1,
        max / 2 + 1,
        -1,
        i64::MIN as i128,
        (rng.next() as i128) & max,
    ];
    let value = candidates[rng.below(candidates.len())];
    if encoding == Encoding::I64Be {
        value.clamp(i64::MIN as i128, i64::MAX as i128)
    } else {
        value.clamp(0, max)
    }
}

fn write_field(bytes: &mut [u8], field: Field, value: i128) -> bool {
    let at = field.at;
    match field.encoding {
        Encoding::Be(n) if at + n <= bytes.len() => {
            let raw = (value as u128).to_be_bytes();
            bytes[at..at + n].copy_from_slice(&raw[16 - n..]);
        }
        Encoding::Le(n) if at + n <= bytes.len() => {
            let raw = (value as u128).to_le_bytes();
            bytes[at..at + n].copy_from_slice(&raw[..n]);
        }
        Encoding::I64Be if at + 8 <= bytes.len() => {
            bytes[at..at + 8].copy_from_slice(&(value as i64).to_be_bytes());
        }
        Encoding::Vint(n) if at + n <= bytes.len() => {
            let marked = (value as u64) | (1u64 << (7 * n));
            let raw = marked.to_be_bytes();
            bytes[at..at + n].copy_from_slice(&raw[8 - n..]);
        }
        _ => return false,
    }
    true
}

/// The units of `bytes`, by the container its first bytes name (none for anything else).
pub fn units(bytes: &[u8]) -> Vec<Unit> {
    let mut found = Vec::new();
    match bytes.get(..4) {
        Some(b"RIFF") | Some(b"RIFX") => {
            root(&mut found, bytes, Encoding::Le(4));
            chunks(&mut found, bytes, 12, ChunkForm::Riff);
        }
        Some(b"FORM") => {
            root(&mut found, bytes, Encoding::Be(4));
            chunks(&mut found, bytes, 12, ChunkForm::Iff);
        }
        Some(b"caff") => chunks(&mut found, bytes, 8, ChunkForm::Caf),
        Some(b"fLaC") => flac_blocks(&mut found, bytes),
        Some(b"OggS") => ogg_pages(&mut found, bytes),
        Some([0x1A, 0x45, 0xDF, 0xA3]) => ebml(&mut found, bytes, 0, bytes.len(), 0),
        Some(b"ID3\x02" | b"ID3\x03" | b"ID3\x04") => mp3(&mut found, bytes),
        Some(_) if bytes.get(4..8).is_some_and(is_box_type) => {
            boxes(&mut found, bytes, 0, bytes.len(), 0)
        }
        Some([0xFF, second, ..]) if second & 0xE0 == 0xE0 => mp3(&mut found, bytes),
        _ => {}
    }
    found
}

fn root(found: &mut Vec<Unit>, bytes: &[u8], encoding: Encoding) {
    found.push(Unit {
        start: 0,
        end: bytes.len(),
        fields: vec![Field { at: 4, encoding }],
    });
}

#[derive(Clone, Copy)]
enum ChunkForm {
    /// WAV: 4-byte id, 32-bit little-endian size, padded to even.
    Riff,
    /// AIFF: 4-byte id, 32-bit big-endian size, padded to even.
    Iff,
    /// CAF: 4-byte type, signed 64-bit big-endian size.
    Caf,
}

fn chunks(found: &mut Vec<Unit>, bytes: &[u8], mut at: usize, form: ChunkForm) {
    while at + 8 <= bytes.len() && found.len() < 256 {
        let (size, header, encoding) = match form {
            ChunkForm::Riff => (u32_le(bytes, at + 4) as u64, 8, Encoding::Le(4)),
            ChunkForm::Iff => (u32_be(bytes, at + 4) as u64, 8, Encoding::Be(4)),
            ChunkForm::Caf if at + 12 <= bytes.len() => {
                let size = i64::from_be_bytes(bytes[at + 4..at + 12].try_into().unwrap());
                (size.max(0) as u64, 12, Encoding::I64Be)
            }
            ChunkForm::Caf => return,
        };
        let padded = match form {
            ChunkForm::Caf => size,
            _ => size + (size & 1),
        };
        let end = (at as u64 + header + padded).min(bytes.len() as u64) as usize;
        let mut fields = vec![Field {
            at: at + 4,
            encoding,
        }];
        // AIFF's COMM frame count and CAF's packet table counts.
        if matches!(form, ChunkForm::Iff) && &bytes[at..at + 4] == b"COMM" {
            fields.push(Field {
                at: at + 10,
                encoding: Encoding::Be(4),
            });
        }
        if matches!(form, ChunkForm::Caf) && &bytes[at..at + 4] == b"pakt" {
            for offset in [12, 20] {
                fields.push(Field {
                    at: at + offset,
                    encoding: Encoding::I64Be,
                });
            }
        }
        found.push(Unit {
            start: at,
            end,
            fields,
        });
        if end <= at + header as usize {
            return;
        }
        at = end;
    }
}

fn flac_blocks(found: &mut Vec<Unit>, bytes: &[u8]) {
    let mut at = 4;
    while at + 4 <= bytes.len() && found.len() < 64 {
        let len = u32_be(bytes, at) as usize & 0x00FF_FFFF;
        let end = (at + 4 + len).min(bytes.len());
        let mut fields = vec![Field {
            at: at + 1,
            encoding: Encoding::Be(3),
        }];
        if bytes[at] & 0x7F == 0 {
            // STREAMINFO: block sizes, frame sizes.
            fields.push(Field {
                at: at + 4,
                encoding: Encoding::Be(2),
            });
            fields.push(Field {
                at: at + 8,
                encoding: Encoding::Be(3),
            });
        }
        found.push(Unit {
            start: at,
            end,
            fields,
        });
        let last = bytes[at] & 0x80 != 0;
        at = end;
        if last {
            break;
        }
    }
    // The first audio frames, found by their sync code.
    frames_by_sync(found, bytes, at, |b| b[0] == 0xFF && b[1] & 0xFE == 0xF8);
}

fn ogg_pages(found: &mut Vec<Unit>, bytes: &[u8]) {
    let mut at = 0;
    while at + 27 <= bytes.len() && &bytes[at..at + 4] == b"OggS" && found.len() < 256 {
        let segments = bytes[at + 26] as usize;
        let table = at + 27;
        if table + segments > bytes.len() {
            found.push(Unit {
                start: at,
                end: bytes.len(),
                fields: Vec::new(),
            });
            return;
        }
        let body: usize = bytes[table..table + segments]
            .iter()
            .map(|&b| b as usize)
            .sum();
        let end = (table + segments + body).min(bytes.len());
        let mut fields = vec![
            Field {
                at: at + 6,
                encoding: Encoding::Le(8),
            },
            Field {
                at: at + 26,
                encoding: Encoding::Be(1),
            },
        ];
        if segments > 0 {
            fields.push(Field {
                at: table + segments - 1,
                encoding: Encoding::Be(1),
            });
        }
        // The Opus and Vorbis identification headers' rates, channel counts and pre-skip.
        if bytes[table + segments..end].starts_with(b"OpusHead") {
            let head = table + segments;
            fields.push(Field {
                at: head + 9,
                encoding: Encoding::Be(1),
            });
            fields.push(Field {
                at: head + 10,
                encoding: Encoding::Le(2),
            });
            fields.push(Field {
                at: head + 12,
                encoding: Encoding::Le(4),
            });
        }
        if bytes[table + segments..end].starts_with(b"\x01vorbis") {
            let head = table + segments;
            fields.push(Field {
                at: head + 11,
                encoding: Encoding::Be(1),
            });
            fields.push(Field {
                at: head + 12,
                encoding: Encoding::Le(4),
            });
            fields.push(Field {
                at: head + 28,
                encoding: Encoding::Be(1),
            });
        }
        found.push(Unit {
            start: at,
            end,
            fields,
        });
        at = end;
    }
}

/// Recomputes the checksum of every whole Ogg page, so that damage inside a page is read.
fn mend_ogg_checksums(bytes: &mut [u8]) {
    if !bytes.starts_with(b"OggS") {
        return;
    }
    for page in units(bytes) {
        if page.end - page.start < 27 || &bytes[page.start..page.start + 4] != b"OggS" {
            continue;
        }
        bytes[page.start + 22..page.start + 26].fill(0);
        let crc = ogg_crc(&bytes[page.start..page.end]);
        bytes[page.start + 22..page.start + 26].copy_from_slice(&crc.to_le_bytes());
    }
}

fn ogg_crc(data: &[u8]) -> u32 {
    let mut crc = 0u32;
    for &byte in data {
        crc ^= (byte as u32) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Matroska master elements whose children are elements too.
const EBML_MASTERS: &[u32] = &[
    0x1A45_DFA3,
    0x1853_8067,
    0x114D_9B74,
    0x4DBB,
    0x1549_A966,
    0x1654_AE6B,
    0xAE,
    0xE1,
    0x1F43_B675,
    0xA0,
    0x1C53_BB6B,
    0xBB,
    0xB7,
    0x1254_C367,
    0x7373,
    0x6D80,
    0x6240,
    0x5035,
];

fn ebml(found: &mut Vec<Unit>, bytes: &[u8], mut at: usize, end: usize, depth: usize) {
    while at < end && found.len() < 512 {
        let Some((id, id_len)) = vint(bytes, at, true) else {
            return;
        };
        let Some((size, size_len)) = vint(bytes, at + id_len, false) else {
            return;
        };
        let header = id_len + size_len;
        let unknown = size == (1u64 << (7 * size_len)) - 1;
        let element_end = if unknown {
            end
        } else {
            (at as u64 + header as u64)
                .saturating_add(size)
                .min(end as u64) as usize
        };
        let mut fields = vec![Field {
            at: at + id_len,
            encoding: Encoding::Vint(size_len),
        }];
        // Block and SimpleBlock: the track number and the lacing flags.
        if matches!(id, 0xA1 | 0xA3) && at + header + 4 <= bytes.len() {
            fields.push(Field {
                at: at + header + 3,
                encoding: Encoding::Be(1),
            });
        }
        found.push(Unit {
            start: at,
            end: element_end,
            fields,
        });
        if EBML_MASTERS.contains(&(id as u32)) && depth < 8 {
            ebml(found, bytes, at + header, element_end, depth + 1);
        }
        if element_end <= at {
            return;
        }
        at = element_end;
    }
}

/// An EBML variable-length integer at `at`: its value (marker removed unless `keep_marker`)
/// and its length.
fn vint(bytes: &[u8], at: usize, keep_marker: bool) -> Option<(u64, usize)> {
    let first = *bytes.get(at)?;
    let len = first.leading_zeros() as usize + 1;
    if len > 8 || at + len > bytes.len() {
        return None;
    }
    let mut value = if keep_marker {
        first as u64
    } else {
        (first as u64) & ((1 << (8 - len)) - 1)
    };
    for &byte in &bytes[at + 1..at + len] {
        value = (value << 8) | byte as u64;
    }
    Some((value, len))
}

/// MP4 boxes whose children are boxes, and how many bytes come before the children.
fn box_children_offset(kind: &[u8]) -> Option<usize> {
    match kind {
        b"moov" | b"trak" | b"mdia" | b"minf" | b"stbl" | b"edts" | b"dinf" | b"udta" | b"mvex"
        | b"moof" | b"traf" | b"wave" => Some(8),
        b"stsd" => Some(16),
        b"meta" => Some(12),
        b"mp4a" | b"alac" | b"fLaC" | b"Opus" | b"lpcm" | b"sowt" | b"twos" | b".mp3" => Some(36),
        _ => None,
    }
}

fn is_box_type(kind: &[u8]) -> bool {
    matches!(
        kind,
        b"ftyp" | b"moov" | b"mdat" | b"free" | b"skip" | b"wide" | b"pnot" | b"styp"
    )
}

fn boxes(found: &mut Vec<Unit>, bytes: &[u8], mut at: usize, end: usize, depth: usize) {
    while at + 8 <= end && found.len() < 512 {
        let size = u32_be(bytes, at) as u64;
        let kind = &bytes[at + 4..at + 8];
        let (box_len, mut fields) = match size {
            1 if at + 16 <= end => (
                u64::from_be_bytes(bytes[at + 8..at + 16].try_into().unwrap()),
                vec![Field {
                    at: at + 8,
                    encoding: Encoding::Be(8),
                }],
            ),
            0 => (
                (end - at) as u64,
                vec![Field {
                    at,
                    encoding: Encoding::Be(4),
                }],
            ),
            _ => (
                size,
                vec![Field {
                    at,
                    encoding: Encoding::Be(4),
                }],
            ),
        };
        let box_end = (at as u64).saturating_add(box_len.max(8)).min(end as u64) as usize;
        // Sample tables: their entry counts (and stsz's fixed size).
        match kind {
            b"stts" | b"stsc" | b"stco" | b"co64" | b"stss" | b"ctts" | b"stsd" | b"elst" => {
                fields.push(Field {
                    at: at + 12,
                    encoding: Encoding::Be(4),
                });
            }
            b"stsz" => {
                fields.push(Field {
                    at: at + 12,
                    encoding: Encoding::Be(4),
                });
                fields.push(Field {
                    at: at + 16,
                    encoding: Encoding::Be(4),
                });
            }
            b"mdhd" => fields.push(Field {
                at: at + 20,
                encoding: Encoding::Be(4),
            }),
            _ => {}
        }
        fields.retain(|f| f.at < bytes.len());
        found.push(Unit {
            start: at,
            end: box_end,
            fields,
        });
        if let Some(offset) = box_children_offset(kind)
            && depth < 10
        {
            boxes(found, bytes, at + offset, box_end, depth + 1);
        }
        if box_end <= at {
            return;
        }
        at = box_end;
    }
}

fn mp3(found: &mut Vec<Unit>, bytes: &[u8]) {
    let mut at = 0;
    if bytes.starts_with(b"ID3") && bytes.len() >= 10 {
        let size = bytes[6..10]
            .iter()
            .fold(0usize, |n, &b| (n << 7) | (b & 0x7F) as usize);
        let end = (10 + size).min(bytes.len());
        found.push(Unit {
            start: 0,
            end,
            fields: vec![Field {
                at: 6,
                encoding: Encoding::Be(4),
            }],
        });
        at = end;
    }
    frames_by_sync(found, bytes, at, |b| b[0] == 0xFF && b[1] & 0xE0 == 0xE0);
}

/// Up to 32 frames from `at` on, each starting at a sync code and running to the next; the
/// frame header is the field.
fn frames_by_sync(found: &mut Vec<Unit>, bytes: &[u8], at: usize, is_sync: impl Fn(&[u8]) -> bool) {
    let starts: Vec<usize> = (at..bytes.len().saturating_sub(4))
        .filter(|&i| is_sync(&bytes[i..i + 2]))
        .take(33)
        .collect();
    for pair in starts.windows(2) {
        found.push(Unit {
            start: pair[0],
            end: pair[1],
            fields: vec![Field {
                at: pair[0] + 2,
                encoding: Encoding::Be(2),
            }],
        });
    }
}

fn u32_be(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn u32_le(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}
