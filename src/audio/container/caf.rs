//! Core Audio Format: a walk over the chunks, done before the demuxer sees the file.
//!
//! The demuxer sizes buffers from untrusted fields without checking them against the file:
//! the magic cookie chunk is read whole, the packet table is reserved from its packet count,
//! each compressed packet is read into a buffer of the size the table gives, and PCM is read
//! in blocks of 1152 frames of the declared frame size. A failed allocation aborts the process,
//! so the walk refuses a cookie or packet table larger than the rest of the file, a packet
//! table that claims more packets than it has bytes, packets larger than the file and PCM
//! frames of implausible size.
//!
//! The walk steps from chunk to chunk where the demuxer does: it reads a channel layout and a
//! packet table by their content, not by their declared size, so the next chunk is where their
//! content ends (a channel layout declaring 2^63 bytes hid a magic cookie asking for 8 EB).

use std::fs::File;

use super::read_at;

/// Largest PCM frame accepted, in bytes (eight channels of 64-bit samples take 64).
const MAX_PCM_FRAME_BYTES: u32 = 4096;
/// The most frames a packet of a packet table may hold (about 22 s at 48 kHz; ALAC's packets hold
/// 4,096, AAC's 1,024): the decoder sizes its buffer by the largest packet.
const MAX_FRAMES_PER_PACKET: u64 = 1 << 20;

/// The fields of the audio description that decide how packets are read.
#[derive(Debug, Clone, Copy)]
struct Description {
    bytes_per_packet: u32,
    frames_per_packet: u32,
    compressed: bool,
}

/// Checks the chunks of a CAF file of `len` bytes; see the module docs.
pub(crate) fn scan_caf(file: &mut File, len: u64) -> Result<(), String> {
    let mut desc = None;
    let mut pos = 8u64; // after "caff", the version and the flags
    while len.saturating_sub(pos) >= 12 {
        let mut header = [0u8; 12];
        read_at(file, pos, &mut header).map_err(|e| e.to_string())?;
        let kind = &header[..4];
        let size = i64::from_be_bytes(header[4..].try_into().expect("8 bytes"));
        let data = pos + 12;
        let left = len - data;
        // A negative size is the demuxer's to refuse (-1: audio data up to the end).
        let Ok(size) = u64::try_from(size) else {
            return Ok(());
        };
        match kind {
            b"desc" if size == 32 => {
                let d = description(file, data)?;
                if !d.compressed && d.bytes_per_packet > MAX_PCM_FRAME_BYTES {
                    return Err(format!(
                        "implausible PCM frame size of {} bytes",
                        d.bytes_per_packet
                    ));
                }
                desc = Some(d);
            }
            b"kuki" if size > left => return Err("the magic cookie overruns the file".into()),
            b"pakt" => match packet_table(file, data, size, left, desc, len)? {
                Some(read) => {
                    pos = data + read;
                    continue;
                }
                None => return Ok(()), // refused by the demuxer, or the table ends early
            },
            b"chan" => {
                if size < 12 || left < 12 {
                    return Ok(()); // refused by the demuxer, or cut short
                }
                let mut count = [0u8; 4];
                read_at(file, data + 8, &mut count).map_err(|e| e.to_string())?;
                pos = data + 12 + 20 * u64::from(u32::from_be_bytes(count));
                continue;
            }
            _ => {}
        }
        match data.checked_add(size) {
            Some(next) if next <= len => pos = next,
            _ => return Ok(()), // the last chunk, cut short or running to the end
        }
    }
    Ok(())
}

fn description(file: &mut File, data: u64) -> Result<Description, String> {
    let mut d = [0u8; 32];
    read_at(file, data, &mut d).map_err(|e| e.to_string())?;
    let field = |at: usize| u32::from_be_bytes(d[at..at + 4].try_into().expect("4 bytes"));
    Ok(Description {
        bytes_per_packet: field(16),
        frames_per_packet: field(20),
        compressed: field(28) == 0,
    })
}

/// Checks a packet table of `size` bytes at `data` (`left` bytes to the end of the file).
fn packet_table(
    file: &mut File,
    data: u64,
    size: u64,
    left: u64,
    desc: Option<Description>,
    file_len: u64,
) -> Result<Option<u64>, String> {
    if size < 24 {
        return Ok(None); // refused by the demuxer
    }
    if size > left {
        return Err("the packet table overruns the file".into());
    }
    let mut head = [0u8; 8];
    read_at(file, data, &mut head).map_err(|e| e.to_string())?;
    let packets = i64::from_be_bytes(head);
    let Ok(packets) = u64::try_from(packets) else {
        return Ok(None); // refused by the demuxer
    };
    if packets > size - 24 {
        return Err("the packet table claims more packets than it holds".into());
    }
    let Some(desc) = desc else {
        return Ok(None); // refused by the demuxer
    };
    // Which fields each entry has: a size unless packets have a constant one, a frame count
    // unless packets have a constant one.
    let (sized, counted) = (desc.bytes_per_packet == 0, desc.frames_per_packet == 0);
    if !sized && u64::from(desc.bytes_per_packet) > file_len {
        return Err("the packet size overruns the file".into());
    }
    if !sized && !counted {
        return Ok(Some(24)); // no entries: the demuxer reads the header only
    }
    // The demuxer reads the entries it was promised wherever they end, past the chunk's declared
    // size too: up to two integers of at most 9 bytes each per packet, up to the end of the file.
    let span = packets.saturating_mul(18).min(left.saturating_sub(24));
    let mut entries = vec![0u8; span as usize];
    read_at(file, data + 24, &mut entries).map_err(|e| e.to_string())?;
    let mut at = 0;
    for _ in 0..packets {
        if sized {
            match vlq(&entries, &mut at) {
                Some(bytes) if bytes > file_len => {
                    return Err("a packet overruns the file".into());
                }
                Some(_) => {}
                None => return Ok(None), // the table ends early: the demuxer fails there
            }
        }
        if counted {
            match vlq(&entries, &mut at) {
                Some(frames) if frames > MAX_FRAMES_PER_PACKET => {
                    return Err(format!(
                        "a packet claims {frames} frames (at most {MAX_FRAMES_PER_PACKET})"
                    ));
                }
                Some(_) => {}
                None => return Ok(None),
            }
        }
    }
    // Where the demuxer's reading of the table ends.
    Ok(Some(24 + at as u64))
}

/// A CAF variable-length integer (seven bits a byte, high bit set on all but the last).
fn vlq(bytes: &[u8], at: &mut usize) -> Option<u64> {
    // As the demuxer reads it: at most 9 bytes, high bits shifted out.
    let mut value = 0u64;
    for _ in 0..9 {
        let b = *bytes.get(*at)?;
        *at += 1;
        value = (value << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn chunk(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        [kind.as_slice(), &(body.len() as i64).to_be_bytes(), body].concat()
    }

    fn desc(bytes_per_packet: u32, frames_per_packet: u32, bits: u32) -> Vec<u8> {
        let mut d = 44_100f64.to_be_bytes().to_vec();
        d.extend_from_slice(b"alac");
        for v in [0, bytes_per_packet, frames_per_packet, 1, bits] {
            d.extend_from_slice(&v.to_be_bytes());
        }
        chunk(b"desc", &d)
    }

    fn scan(chunks: &[Vec<u8>]) -> Result<(), String> {
        let bytes = [b"caff\x00\x01\x00\x00".as_slice(), &chunks.concat()].concat();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&bytes).unwrap();
        scan_caf(&mut f, bytes.len() as u64)
    }

    fn pakt(packets: i64, entries: &[u8]) -> Vec<u8> {
        let mut body = packets.to_be_bytes().to_vec();
        body.extend_from_slice(&[0; 16]);
        body.extend_from_slice(entries);
        chunk(b"pakt", &body)
    }

    #[test]
    fn plausible_tables_pass() {
        let data = chunk(b"data", &[0; 40]);
        assert_eq!(scan(&[desc(0, 4096, 0), pakt(2, &[20, 20]), data]), Ok(()));
        // A two-byte size: 0x81 0x00 is 128 (the file holds that much).
        let data = chunk(b"data", &[0; 200]);
        assert_eq!(
            scan(&[desc(0, 4096, 0), pakt(1, &[0x81, 0x00]), data]),
            Ok(())
        );
    }

    #[test]
    fn hostile_sizes_are_refused() {
        let mut cookie = b"kuki".to_vec();
        cookie.extend_from_slice(&(1i64 << 50).to_be_bytes());
        cookie.extend_from_slice(&[0; 24]);
        assert!(scan(&[desc(0, 4096, 0), cookie]).is_err());
        assert!(scan(&[desc(0, 4096, 0), pakt(1 << 40, &[1, 2, 3])]).is_err());
        // A packet of 2^35 frames: the decoder would size a buffer for them.
        let frames = [0x81, 0x80, 0x80, 0x80, 0x80, 0x00];
        assert!(scan(&[desc(6, 0, 0), pakt(1, &frames)]).is_err());
        assert_eq!(scan(&[desc(6, 0, 0), pakt(1, &[0xa0, 0x00])]), Ok(()));
        // The same count, read on past the table's declared size as the demuxer reads it.
        let mut overrun = pakt(1, &[0x81]);
        overrun.extend([0x80, 0x80, 0x80, 0x80, 0x00]);
        assert!(scan(&[desc(6, 0, 0), overrun]).is_err());
        // One packet whose size is about 2^62 bytes.
        let huge = [0xC0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        assert!(scan(&[desc(0, 4096, 0), pakt(1, &huge)]).is_err());
        // PCM frames of 4 GB.
        assert!(scan(&[desc(u32::MAX, 1, 16)]).is_err());
    }

    /// The demuxer reads a channel layout and a packet table by their content: a cookie right
    /// after their content is read, whatever size they declare, and is checked.
    #[test]
    fn chunks_hidden_behind_a_declared_size_are_checked_where_the_demuxer_reads_them() {
        let mut cookie = b"kuki".to_vec();
        cookie.extend_from_slice(&(1i64 << 62).to_be_bytes());
        cookie.extend_from_slice(&[0; 24]);
        let mut layout = b"chan".to_vec();
        layout.extend_from_slice(&i64::MAX.to_be_bytes());
        layout.extend_from_slice(&[0; 12]); // tag, bitmap, no descriptions
        assert!(scan(&[desc(0, 4096, 0), layout.clone(), cookie.clone()]).is_err());
        // A table of 25 bytes declaring 61: the cookie (36 bytes) lies inside its declared size.
        let mut long_table = pakt(1, &[20]);
        long_table[4..12].copy_from_slice(&61i64.to_be_bytes());
        assert!(scan(&[desc(0, 4096, 0), long_table, cookie]).is_err());
        // An honest layout followed by data passes.
        let honest = chunk(b"chan", &[0; 12]);
        let data = chunk(b"data", &[0; 40]);
        assert_eq!(scan(&[desc(0, 4096, 0), honest, data]), Ok(()));
    }
}
