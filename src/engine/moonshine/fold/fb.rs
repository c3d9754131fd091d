//! Minimal FlatBuffers access: a bounds-checked reader (tables, fields, strings, vectors) and the few
//! in-place writes the rewrite needs (append at the end, repoint a field, compact a vector).
//!
//! Every read checks its position and length against the buffer and returns [`FoldError`] instead of
//! panicking. Vector reads are charged to a budget proportional to the buffer size, so a damaged file
//! whose tables share one huge vector cannot make a caller collect more elements than a real file has.

use super::FoldError;
use std::cell::Cell;

pub type Result<T> = std::result::Result<T, FoldError>;

/// A vector in the buffer: `pos` is the position of its u32 length word, elements start at `pos + 4`.
#[derive(Clone, Copy, Debug)]
pub struct Vector {
    pub pos: usize,
    pub len: usize,
    pub elem: usize,
}

impl Vector {
    /// Position of element `i`.
    pub fn at(&self, i: usize) -> usize {
        self.pos + 4 + self.elem * i
    }
    /// Size in bytes of the elements.
    pub fn byte_len(&self) -> usize {
        self.len * self.elem
    }
}

/// Checked, read-only view of a flatbuffer.
pub struct Reader<'a> {
    buf: &'a [u8],
    budget: Cell<usize>,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        // A real file stores each collected vector once, with elements of at least 4 bytes.
        Self::with_budget(buf, buf.len() / 4 + 1024)
    }

    /// A reader that may visit at most `budget` vector elements in all.
    pub fn with_budget(buf: &'a [u8], budget: usize) -> Self {
        Reader {
            buf,
            budget: Cell::new(budget),
        }
    }

    /// What is left of the budget.
    pub fn budget(&self) -> usize {
        self.budget.get()
    }

    pub fn bytes(&self, pos: usize, n: usize) -> Result<&'a [u8]> {
        pos.checked_add(n)
            .and_then(|end| self.buf.get(pos..end))
            .ok_or(FoldError::OutOfBounds { at: pos })
    }

    fn array<const N: usize>(&self, pos: usize) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(pos, N)?);
        Ok(a)
    }

    pub fn u16(&self, pos: usize) -> Result<u16> {
        self.array(pos).map(u16::from_le_bytes)
    }
    pub fn u32(&self, pos: usize) -> Result<u32> {
        self.array(pos).map(u32::from_le_bytes)
    }
    pub fn i32(&self, pos: usize) -> Result<i32> {
        self.array(pos).map(i32::from_le_bytes)
    }
    pub fn i64(&self, pos: usize) -> Result<i64> {
        self.array(pos).map(i64::from_le_bytes)
    }
    pub fn i8(&self, pos: usize) -> Result<i8> {
        self.array(pos).map(i8::from_le_bytes)
    }

    /// Follow the uoffset stored at `pos`.
    pub fn deref(&self, pos: usize) -> Result<usize> {
        let target = pos
            .checked_add(self.u32(pos)? as usize)
            .filter(|&t| t < self.buf.len())
            .ok_or(FoldError::OutOfBounds { at: pos })?;
        Ok(target)
    }

    /// Position of field `slot` (0-based) of the table at `t`, or `None` when the field is absent.
    pub fn field(&self, t: usize, slot: usize) -> Result<Option<usize>> {
        let vt = (t as i64)
            .checked_sub(self.i32(t)? as i64)
            .filter(|&v| v >= 0)
            .ok_or(FoldError::OutOfBounds { at: t })? as usize;
        let vt_len = self.u16(vt)? as usize;
        let o = 4 + 2 * slot;
        if o + 2 > vt_len {
            return Ok(None);
        }
        match self.u16(vt + o)? {
            0 => Ok(None),
            fo => Ok(Some(t + fo as usize)),
        }
    }

    /// The table (or string / vector) that field `slot` of table `t` points to.
    pub fn table(&self, t: usize, slot: usize) -> Result<Option<usize>> {
        self.field(t, slot)?.map(|p| self.deref(p)).transpose()
    }

    fn string_at(&self, s: usize) -> Result<&'a [u8]> {
        let n = self.u32(s)? as usize;
        self.bytes(s + 4, n)
    }

    pub fn string(&self, t: usize, slot: usize) -> Result<Option<&'a [u8]>> {
        self.table(t, slot)?.map(|s| self.string_at(s)).transpose()
    }

    /// Vector field with `elem`-byte elements; its whole extent is checked against the buffer.
    pub fn vector(&self, t: usize, slot: usize, elem: usize) -> Result<Option<Vector>> {
        let Some(pos) = self.table(t, slot)? else {
            return Ok(None);
        };
        let len = self.u32(pos)? as usize;
        let bytes = len
            .checked_mul(elem)
            .ok_or(FoldError::OutOfBounds { at: pos })?;
        self.bytes(pos + 4, bytes)?;
        Ok(Some(Vector { pos, len, elem }))
    }

    fn charge(&self, n: usize) -> Result<()> {
        let left = self
            .budget
            .get()
            .checked_sub(n)
            .ok_or(FoldError::Malformed("too many vector elements"))?;
        self.budget.set(left);
        Ok(())
    }

    /// Like [`Reader::vector`], for a vector whose elements the caller will visit one by one: its
    /// length is charged to the budget.
    pub fn counted_vector(&self, t: usize, slot: usize, elem: usize) -> Result<Option<Vector>> {
        let v = self.vector(t, slot, elem)?;
        if let Some(v) = v {
            self.charge(v.len)?;
        }
        Ok(v)
    }

    /// Elements of a vector of tables (empty when absent).
    pub fn tables(&self, t: usize, slot: usize) -> Result<Vec<usize>> {
        let Some(v) = self.counted_vector(t, slot, 4)? else {
            return Ok(Vec::new());
        };
        (0..v.len).map(|i| self.deref(v.at(i))).collect()
    }

    /// Elements of a vector of strings (empty when absent).
    pub fn strings(&self, t: usize, slot: usize) -> Result<Vec<&'a [u8]>> {
        self.tables(t, slot)?
            .into_iter()
            .map(|s| self.string_at(s))
            .collect()
    }

    /// A vector of i64 (`None` when absent).
    pub fn i64s(&self, t: usize, slot: usize) -> Result<Option<Vec<i64>>> {
        let Some(v) = self.counted_vector(t, slot, 8)? else {
            return Ok(None);
        };
        (0..v.len)
            .map(|i| self.i64(v.at(i)))
            .collect::<Result<_>>()
            .map(Some)
    }

    /// Scalar field readers with the schema default used when the field is absent.
    pub fn field_u32(&self, t: usize, slot: usize, default: u32) -> Result<u32> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.u32(p))
    }
    pub fn field_i32(&self, t: usize, slot: usize, default: i32) -> Result<i32> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i32(p))
    }
    pub fn field_i64(&self, t: usize, slot: usize, default: i64) -> Result<i64> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i64(p))
    }
    pub fn field_u8(&self, t: usize, slot: usize, default: u8) -> Result<u8> {
        self.field(t, slot)?
            .map_or(Ok(default), |p| self.bytes(p, 1).map(|b| b[0]))
    }
    pub fn field_i8(&self, t: usize, slot: usize, default: i8) -> Result<i8> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i8(p))
    }
}

fn slot_mut(buf: &mut [u8], pos: usize, n: usize) -> Result<&mut [u8]> {
    pos.checked_add(n)
        .and_then(|end| buf.get_mut(pos..end))
        .ok_or(FoldError::OutOfBounds { at: pos })
}

pub fn put_u32(buf: &mut [u8], pos: usize, v: u32) -> Result<()> {
    slot_mut(buf, pos, 4)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}
pub fn put_i32(buf: &mut [u8], pos: usize, v: i32) -> Result<()> {
    slot_mut(buf, pos, 4)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}
pub fn put_i64(buf: &mut [u8], pos: usize, v: i64) -> Result<()> {
    slot_mut(buf, pos, 8)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}

/// Store at `field` a uoffset to `target`, which must lie after it (every uoffset points forward).
pub fn point(buf: &mut [u8], field: usize, target: usize) -> Result<()> {
    let rel = target
        .checked_sub(field)
        .filter(|&d| d > 0)
        .and_then(|d| u32::try_from(d).ok())
        .ok_or(FoldError::TooLarge)?;
    put_u32(buf, field, rel)
}

/// Zero-pad until `buf.len() + extra` is a multiple of `align`.
fn pad(buf: &mut Vec<u8>, align: usize, extra: usize) {
    while !(buf.len() + extra).is_multiple_of(align) {
        buf.push(0);
    }
}

fn len_word(n: usize) -> Result<[u8; 4]> {
    u32::try_from(n)
        .map(u32::to_le_bytes)
        .map_err(|_| FoldError::TooLarge)
}

/// Append a string (4-aligned, length word, bytes, NUL); returns its position.
pub fn append_string(buf: &mut Vec<u8>, s: &[u8]) -> Result<usize> {
    pad(buf, 4, 0);
    let p = buf.len();
    buf.extend_from_slice(&len_word(s.len())?);
    buf.extend_from_slice(s);
    buf.push(0);
    Ok(p)
}

/// Append a vector of `count` elements of `elem` bytes whose data starts `align`-aligned; `fill` must
/// push exactly that much data. Returns the position of the length word.
pub fn append_vector(
    buf: &mut Vec<u8>,
    count: usize,
    elem: usize,
    align: usize,
    fill: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<usize> {
    let n = count.checked_mul(elem).ok_or(FoldError::TooLarge)?;
    pad(buf, align, 4);
    let p = buf.len();
    buf.extend_from_slice(&len_word(count)?);
    fill(buf)?;
    if buf.len() != p + 4 + n {
        return Err(FoldError::Malformed("vector data of unexpected size"));
    }
    Ok(p)
}

/// Append a `[long]` vector (data 8-aligned); returns its position.
pub fn append_i64s(buf: &mut Vec<u8>, vals: &[i64]) -> Result<usize> {
    append_vector(buf, vals.len(), 8, 8, |b| {
        vals.iter()
            .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        Ok(())
    })
}

/// Compact a vector of table offsets in place, keeping the elements at `keep` (ascending indices).
/// Entries past the new length are left as they were.
pub fn compact_tables(buf: &mut [u8], v: Vector, keep: &[usize]) -> Result<()> {
    let r = Reader::new(buf);
    let targets = keep
        .iter()
        .map(|&i| r.deref(v.at(i)))
        .collect::<Result<Vec<_>>>()?;
    for (j, t) in targets.into_iter().enumerate() {
        point(buf, v.at(j), t)?;
    }
    put_u32(buf, v.pos, keep.len() as u32)
}

/// Compact a vector of structs in place, keeping the elements at `keep` (ascending indices).
pub fn compact_structs(buf: &mut [u8], v: Vector, keep: &[usize]) -> Result<()> {
    for (j, &i) in keep.iter().enumerate() {
        let (src, dst) = (v.at(i), v.at(j));
        slot_mut(buf, src, v.elem)?;
        slot_mut(buf, dst, v.elem)?;
        buf.copy_within(src..src + v.elem, dst);
    }
    put_u32(buf, v.pos, keep.len() as u32)
}
