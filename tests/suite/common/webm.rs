//! Minimal WebM files with one Opus track, written the way a browser's MediaRecorder streams
//! them: an EBML header, a segment and clusters of unknown size, one SimpleBlock per packet.
#![allow(dead_code)]

/// An EBML element with its size written in eight bytes.
pub fn element(id: &[u8], body: &[u8]) -> Vec<u8> {
    let size = (body.len() as u64) | (1 << 56);
    [id, &size.to_be_bytes(), body].concat()
}

/// An element of unknown size (its children follow until the next top-level element).
fn open_element(id: &[u8]) -> Vec<u8> {
    [id, &[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]].concat()
}

fn uint(id: &[u8], value: u64) -> Vec<u8> {
    element(id, &value.to_be_bytes())
}

/// An Opus identification header (RFC 7845 §5.1); `table` is the stream count, coupled count
/// and channel mapping of families other than 0.
pub fn opus_head(channels: u8, pre_skip: u16, gain: i16, family: u8, table: &[u8]) -> Vec<u8> {
    let mut h = b"OpusHead".to_vec();
    h.push(1);
    h.push(channels);
    h.extend_from_slice(&pre_skip.to_le_bytes());
    h.extend_from_slice(&48_000u32.to_le_bytes());
    h.extend_from_slice(&gain.to_le_bytes());
    h.push(family);
    h.extend_from_slice(table);
    h
}

/// A WebM file of one Opus track with identification header `head` and `packets` of 20 ms.
pub fn webm(head: &[u8], channels: u8, packets: &[Vec<u8>]) -> Vec<u8> {
    let ebml = element(
        &[0x1A, 0x45, 0xDF, 0xA3],
        &[
            element(&[0x42, 0x82], b"webm"),
            uint(&[0x42, 0x87], 4),
            uint(&[0x42, 0x85], 2),
        ]
        .concat(),
    );
    let info = element(
        &[0x15, 0x49, 0xA9, 0x66],
        &uint(&[0x2A, 0xD7, 0xB1], 1_000_000),
    );
    let audio = element(
        &[0xE1],
        &[
            element(&[0xB5], &48_000f64.to_be_bytes()),
            uint(&[0x9F], u64::from(channels)),
        ]
        .concat(),
    );
    let entry = element(
        &[0xAE],
        &[
            uint(&[0xD7], 1),
            uint(&[0x73, 0xC5], 1),
            uint(&[0x83], 2),
            element(&[0x86], b"A_OPUS"),
            element(&[0x63, 0xA2], head),
            audio,
        ]
        .concat(),
    );
    let tracks = element(&[0x16, 0x54, 0xAE, 0x6B], &entry);
    let mut out = [ebml, open_element(&[0x18, 0x53, 0x80, 0x67]), info, tracks].concat();
    for (cluster, chunk) in packets.chunks(1000).enumerate() {
        out.extend(open_element(&[0x1F, 0x43, 0xB6, 0x75]));
        out.extend(uint(&[0xE7], cluster as u64 * 20_000));
        for (i, packet) in chunk.iter().enumerate() {
            let rel = (i as i16 * 20).to_be_bytes();
            let block = [&[0x81, rel[0], rel[1], 0x80], packet.as_slice()].concat();
            out.extend(element(&[0xA3], &block));
        }
    }
    out
}

/// A silent 20 ms Opus packet (a CELT frame with no payload) of one stream.
pub const SILENT_PACKET: [u8; 1] = [0xF8];
