//! End-to-end tests on synthetic CTranslate2 models (no real model needed).

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use half::f16;

use super::blocks;
use super::ggml::HParams;
use super::vocab::N_ORDINARY_EN;
use super::*;

const S: usize = 384; // tiny width
const N_MELS: usize = 80;
const AUDIO_CTX: usize = 6;
const TEXT_CTX: usize = 4;
const N_ENC: usize = 1;
const N_DEC: usize = 2;
const N_VOCAB: usize = 51864; // English-only

// -------------------------------------------------------- test utilities

/// A temporary directory removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "ct2-import-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        Self(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A serialized CTranslate2 variable.
#[derive(Clone)]
struct Var {
    name: String,
    shape: Vec<u32>,
    dtype: u8,
    bytes: Vec<u8>,
}

fn ct2_string(out: &mut Vec<u8>, s: &str) {
    out.extend(((s.len() + 1) as u16).to_le_bytes());
    out.extend(s.as_bytes());
    out.push(0);
}

fn serialize(version: u32, spec: &str, vars: &[Var], aliases: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(version.to_le_bytes());
    ct2_string(&mut out, spec);
    out.extend(3u32.to_le_bytes());
    out.extend((vars.len() as u32).to_le_bytes());
    for v in vars {
        ct2_string(&mut out, &v.name);
        out.push(v.shape.len() as u8);
        for d in &v.shape {
            out.extend(d.to_le_bytes());
        }
        out.push(v.dtype);
        out.extend((v.bytes.len() as u32).to_le_bytes());
        out.extend(&v.bytes);
    }
    out.extend((aliases.len() as u32).to_le_bytes());
    for (a, t) in aliases {
        ct2_string(&mut out, a);
        ct2_string(&mut out, t);
    }
    out
}

fn seed(name: &str) -> u32 {
    name.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ b as u32).wrapping_mul(16_777_619)
    })
}

/// Deterministic pseudo-random values in [-0.1, 0.1).
fn values_for(name: &str, n: usize) -> Vec<f32> {
    let s = seed(name);
    (0..n as u32)
        .map(|i| {
            let x = i.wrapping_mul(2_654_435_761) ^ s;
            let x = x ^ (x >> 13);
            ((x >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * 0.2
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Enc {
    F32,
    F16,
    BF16,
    /// int8 with a per-row `weight_scale`.
    I8,
}

/// Adds `name` with generated values stored as `enc`; returns the values the
/// reader must recover (after the storage rounding / dequantization).
fn add(
    vars: &mut Vec<Var>,
    expect: &mut HashMap<String, Vec<f32>>,
    name: &str,
    shape: &[usize],
    enc: Enc,
) {
    let n: usize = shape.iter().product();
    let shape32: Vec<u32> = shape.iter().map(|&d| d as u32).collect();
    let (dtype, bytes, values) = match enc {
        Enc::F32 => {
            let v = values_for(name, n);
            (0, v.iter().flat_map(|x| x.to_le_bytes()).collect(), v)
        }
        Enc::F16 => {
            let v: Vec<f32> = values_for(name, n)
                .iter()
                .map(|&x| f16::from_f32(x).to_f32())
                .collect();
            (
                4,
                v.iter()
                    .flat_map(|&x| f16::from_f32(x).to_le_bytes())
                    .collect(),
                v,
            )
        }
        Enc::BF16 => {
            let bits: Vec<u16> = values_for(name, n)
                .iter()
                .map(|x| (x.to_bits() >> 16) as u16)
                .collect();
            let v = bits
                .iter()
                .map(|&b| f32::from_bits((b as u32) << 16))
                .collect();
            (5, bits.iter().flat_map(|b| b.to_le_bytes()).collect(), v)
        }
        Enc::I8 => {
            let rows = shape[0];
            let row_len = n / rows;
            let s = seed(name);
            let q: Vec<i8> = (0..n)
                .map(|i| ((i as u32).wrapping_mul(31).wrapping_add(s) % 255) as i32 - 127)
                .map(|x| x as i8)
                .collect();
            let scales: Vec<f32> = (0..rows).map(|r| 100.0 + (r % 7) as f32 * 10.0).collect();
            let v = q
                .iter()
                .enumerate()
                .map(|(i, &x)| x as f32 / scales[i / row_len])
                .collect();
            vars.push(Var {
                name: format!("{name}_scale"),
                shape: vec![rows as u32],
                dtype: 0,
                bytes: scales.iter().flat_map(|x| x.to_le_bytes()).collect(),
            });
            (1, q.iter().map(|&x| x as u8).collect(), v)
        }
    };
    vars.push(Var {
        name: name.to_string(),
        shape: shape32,
        dtype,
        bytes,
    });
    expect.insert(name.to_string(), values);
}

fn scalar_i16(vars: &mut Vec<Var>, name: &str, v: i16) {
    vars.push(Var {
        name: name.into(),
        shape: vec![],
        dtype: 2,
        bytes: v.to_le_bytes().to_vec(),
    });
}

fn linear(
    vars: &mut Vec<Var>,
    e: &mut HashMap<String, Vec<f32>>,
    name: &str,
    out: usize,
    inp: usize,
    enc: Enc,
) {
    add(vars, e, &format!("{name}/weight"), &[out, inp], enc);
    add(vars, e, &format!("{name}/bias"), &[out], Enc::F32);
}

fn norm(vars: &mut Vec<Var>, e: &mut HashMap<String, Vec<f32>>, name: &str) {
    add(vars, e, &format!("{name}/gamma"), &[S], Enc::F32);
    add(vars, e, &format!("{name}/beta"), &[S], Enc::F32);
}

/// A layer's self-attention: layer norm, fused query/key/value, output projection.
fn self_attention(
    vars: &mut Vec<Var>,
    e: &mut HashMap<String, Vec<f32>>,
    layer: &str,
    qkv: Enc,
    out: Enc,
) {
    norm(vars, e, &format!("{layer}/self_attention/layer_norm"));
    linear(
        vars,
        e,
        &format!("{layer}/self_attention/linear_0"),
        3 * S,
        S,
        qkv,
    );
    linear(
        vars,
        e,
        &format!("{layer}/self_attention/linear_1"),
        S,
        S,
        out,
    );
}

/// A layer's feed-forward block: layer norm, expansion to 4x, projection back.
fn feed_forward(
    vars: &mut Vec<Var>,
    e: &mut HashMap<String, Vec<f32>>,
    layer: &str,
    up: Enc,
    down: Enc,
) {
    norm(vars, e, &format!("{layer}/ffn/layer_norm"));
    linear(vars, e, &format!("{layer}/ffn/linear_0"), 4 * S, S, up);
    linear(vars, e, &format!("{layer}/ffn/linear_1"), S, 4 * S, down);
}

/// Variables of a small but structurally complete Whisper model, sorted by
/// name as CTranslate2 writes them, and the values each one holds.
fn synthetic_vars() -> (Vec<Var>, HashMap<String, Vec<f32>>) {
    let mut v = Vec::new();
    let mut e = HashMap::new();
    add(
        &mut v,
        &mut e,
        "encoder/conv1/weight",
        &[S, N_MELS, 3],
        Enc::F16,
    );
    add(&mut v, &mut e, "encoder/conv1/bias", &[S], Enc::F32);
    add(&mut v, &mut e, "encoder/conv2/weight", &[S, S, 3], Enc::F32);
    add(&mut v, &mut e, "encoder/conv2/bias", &[S], Enc::F16);
    add(
        &mut v,
        &mut e,
        "encoder/position_encodings/encodings",
        &[AUDIO_CTX, S],
        Enc::F32,
    );
    norm(&mut v, &mut e, "encoder/layer_norm");
    scalar_i16(&mut v, "encoder/num_heads", 6);
    for i in 0..N_ENC {
        let l = format!("encoder/layer_{i}");
        self_attention(&mut v, &mut e, &l, Enc::F16, Enc::BF16);
        feed_forward(&mut v, &mut e, &l, Enc::I8, Enc::F32);
    }
    add(
        &mut v,
        &mut e,
        "decoder/embeddings/weight",
        &[N_VOCAB, S],
        Enc::I8,
    );
    add(
        &mut v,
        &mut e,
        "decoder/position_encodings/encodings",
        &[TEXT_CTX, S],
        Enc::F32,
    );
    norm(&mut v, &mut e, "decoder/layer_norm");
    scalar_i16(&mut v, "decoder/num_heads", 6);
    v.push(Var {
        name: "decoder/activation".into(),
        shape: vec![],
        dtype: 1,
        bytes: vec![3],
    });
    for i in 0..N_DEC {
        let l = format!("decoder/layer_{i}");
        self_attention(&mut v, &mut e, &l, Enc::F16, Enc::F16);
        norm(&mut v, &mut e, &format!("{l}/attention/layer_norm"));
        linear(
            &mut v,
            &mut e,
            &format!("{l}/attention/linear_0"),
            S,
            S,
            Enc::F16,
        );
        linear(
            &mut v,
            &mut e,
            &format!("{l}/attention/linear_1"),
            2 * S,
            S,
            Enc::F32,
        );
        linear(
            &mut v,
            &mut e,
            &format!("{l}/attention/linear_2"),
            S,
            S,
            Enc::F16,
        );
        feed_forward(&mut v, &mut e, &l, Enc::F16, Enc::F16);
    }
    v.sort_by(|a, b| a.name.cmp(&b.name));
    (v, e)
}

const ALIASES: &[(&str, &str)] = &[("decoder/projection/weight", "decoder/embeddings/weight")];

struct Synthetic {
    vars: Vec<Var>,
    model_bin: Vec<u8>,
    values: HashMap<String, Vec<f32>>,
}

fn synthetic() -> &'static Synthetic {
    static CELL: OnceLock<Synthetic> = OnceLock::new();
    CELL.get_or_init(|| {
        let (vars, values) = synthetic_vars();
        let model_bin = serialize(6, "WhisperSpec", &vars, ALIASES);
        Synthetic {
            vars,
            model_bin,
            values,
        }
    })
}

/// Ordinary token `i` of the synthetic vocabulary, in GPT-2 byte-level form.
fn synthetic_token(i: usize) -> String {
    match i {
        0 => "Ġthe".into(),
        1 => "ĊĊ".into(),
        2 => "Ã©".into(),
        _ => format!("t{i}"),
    }
}

fn synthetic_vocab() -> Vec<String> {
    let mut v: Vec<String> = (0..N_ORDINARY_EN).map(synthetic_token).collect();
    v.push("<|endoftext|>".into());
    v.push("<|startoftranscript|>".into());
    while v.len() < N_VOCAB {
        v.push(format!("<|{}|>", v.len()));
    }
    v
}

fn write_vocab_txt(dir: &Path, tokens: &[String]) {
    fs::write(dir.join("vocabulary.txt"), tokens.join("\n") + "\n").unwrap();
}

/// Writes a complete synthetic model directory.
fn model_dir() -> TestDir {
    let d = TestDir::new();
    fs::write(
        d.path().join("config.json"),
        r#"{"lang_ids": [], "suppress_ids": [1, 2]}"#,
    )
    .unwrap();
    fs::write(d.path().join("model.bin"), &synthetic().model_bin).unwrap();
    write_vocab_txt(d.path(), &synthetic_vocab());
    d
}

fn f16_opts() -> ImportOptions {
    ImportOptions {
        quantization: Quantization::F16,
    }
}

/// Runs an import expected to fail; checks that the output folder is unchanged.
fn import_err(src: &Path) -> Ct2Error {
    let out = TestDir::new();
    fs::write(out.path().join("keep.txt"), "x").unwrap();
    let dest = out.path().join("model.ggml");
    let err = import_ct2(src, &dest, &f16_opts(), &mut |_, _| {}).expect_err("import should fail");
    assert_eq!(
        listing(out.path()),
        vec!["keep.txt".to_string()],
        "left files behind after: {err}"
    );
    // Every message names a file.
    assert!(
        err.to_string().contains(&*src.to_string_lossy()) || err.to_string().contains("model.ggml"),
        "{err}"
    );
    err
}

// ------------------------------------------------------------ ggml parser

struct Ggml {
    hparams: Vec<i32>,
    mel: (i32, i32, Vec<f32>),
    vocab: Vec<Vec<u8>>,
    tensors: HashMap<String, (i32, Vec<i32>, Vec<u8>)>,
    order: Vec<String>,
}

fn parse_ggml(bytes: &[u8]) -> Ggml {
    struct Cur<'a>(&'a [u8], usize);
    impl<'a> Cur<'a> {
        fn take(&mut self, n: usize) -> &'a [u8] {
            let s = &self.0[self.1..self.1 + n];
            self.1 += n;
            s
        }
        fn i32(&mut self) -> i32 {
            i32::from_le_bytes(self.take(4).try_into().unwrap())
        }
    }
    let mut c = Cur(bytes, 0);
    assert_eq!(c.take(4), &0x6767_6d6cu32.to_le_bytes());
    let hparams: Vec<i32> = (0..11).map(|_| c.i32()).collect();
    let (n_mel, n_fft) = (c.i32(), c.i32());
    let mel = c
        .take((n_mel * n_fft) as usize * 4)
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let n_vocab = c.i32();
    let vocab = (0..n_vocab)
        .map(|_| {
            let n = c.i32() as usize;
            c.take(n).to_vec()
        })
        .collect();
    let mut tensors = HashMap::new();
    let mut order = Vec::new();
    while c.1 < bytes.len() {
        let (n_dims, name_len, ty) = (c.i32(), c.i32(), c.i32());
        let ne: Vec<i32> = (0..n_dims).map(|_| c.i32()).collect();
        let name = String::from_utf8(c.take(name_len as usize).to_vec()).unwrap();
        let n: usize = ne.iter().map(|&d| d as usize).product();
        let size = match ty {
            0 => n * 4,
            1 => n * 2,
            7 => n / 32 * 24,
            8 => n / 32 * 34,
            _ => panic!("unexpected type {ty}"),
        };
        let data = c.take(size).to_vec();
        order.push(name.clone());
        assert!(
            tensors.insert(name, (ty, ne, data)).is_none(),
            "duplicate tensor"
        );
    }
    assert_eq!(c.1, bytes.len());
    Ggml {
        hparams,
        mel: (n_mel, n_fft, mel),
        vocab,
        tensors,
        order,
    }
}

fn as_f32(ty: i32, data: &[u8]) -> Vec<f32> {
    match ty {
        0 => data
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect(),
        1 => data
            .chunks(2)
            .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        7 => blocks::dequantize_q5_1(data),
        8 => blocks::dequantize_q8_0(data),
        _ => unreachable!(),
    }
}

fn rows(values: &[f32], row_len: usize, start: usize, count: usize) -> Vec<f32> {
    values[start * row_len..(start + count) * row_len].to_vec()
}

fn f16_round(v: &[f32]) -> Vec<f32> {
    v.iter().map(|&x| f16::from_f32(x).to_f32()).collect()
}

// ------------------------------------------------------------ good paths

#[test]
fn converts_synthetic_model_to_f16() {
    let src = model_dir();
    let out = TestDir::new();
    let dest = out.path().join("ggml-model.bin");
    let mut calls = Vec::new();
    let report = import_ct2(src.path(), &dest, &f16_opts(), &mut |d, t| {
        calls.push((d, t))
    })
    .unwrap();

    assert_eq!(
        report,
        ImportReport {
            n_vocab: N_VOCAB as u32,
            multilingual: false,
            n_audio_state: S as u32,
            n_audio_layer: N_ENC as u32,
            n_text_layer: N_DEC as u32,
            size_name: "tiny",
            bytes_written: fs::metadata(&dest).unwrap().len(),
        }
    );
    assert_eq!(listing(out.path()), vec!["ggml-model.bin".to_string()]);
    let total = calls.last().unwrap().1;
    assert_eq!(calls.first(), Some(&(0, total)));
    assert_eq!(calls.last(), Some(&(total, total)));
    assert!(
        calls
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 == w[1].1)
    );

    let g = parse_ggml(&fs::read(&dest).unwrap());
    let expect_h = [
        N_VOCAB, AUDIO_CTX, S, 6, N_ENC, TEXT_CTX, S, 6, N_DEC, N_MELS, 1,
    ];
    assert_eq!(
        g.hparams,
        expect_h.iter().map(|&x| x as i32).collect::<Vec<_>>()
    );
    assert_eq!((g.mel.0, g.mel.1), (80, 201));
    assert_eq!(g.mel.2, mel::mel_filters(80));
    assert_eq!(g.vocab.len(), N_ORDINARY_EN);
    assert_eq!(g.vocab[0], b" the");
    assert_eq!(g.vocab[1], b"\n\n");
    assert_eq!(g.vocab[2], "é".as_bytes());
    assert_eq!(g.vocab[50255], b"t50255");
    // Exactly the tensors whisper.cpp allocates: 11 global, 15 per encoder
    // layer, 24 per decoder layer.
    assert_eq!(g.tensors.len(), 11 + 15 * N_ENC + 24 * N_DEC);
    assert_eq!(
        g.order.first().map(String::as_str),
        Some("encoder.positional_embedding")
    );

    let v = &synthetic().values;
    let t = |name: &str| {
        g.tensors
            .get(name)
            .unwrap_or_else(|| panic!("missing {name}"))
    };
    // Types and ggml dims (innermost first).
    assert_eq!(
        (t("encoder.conv1.weight").0, &t("encoder.conv1.weight").1),
        (1, &vec![3, 80, S as i32])
    );
    assert_eq!(
        (t("encoder.conv1.bias").0, &t("encoder.conv1.bias").1),
        (0, &vec![1, S as i32])
    );
    assert_eq!(
        (
            t("encoder.positional_embedding").0,
            &t("encoder.positional_embedding").1
        ),
        (0, &vec![S as i32, AUDIO_CTX as i32])
    );
    assert_eq!(
        (
            t("decoder.token_embedding.weight").0,
            &t("decoder.token_embedding.weight").1
        ),
        (1, &vec![S as i32, N_VOCAB as i32])
    );
    assert_eq!(
        (
            t("encoder.blocks.0.mlp.0.weight").0,
            &t("encoder.blocks.0.mlp.0.weight").1
        ),
        (1, &vec![S as i32, 4 * S as i32])
    );
    assert_eq!(
        (
            t("decoder.blocks.1.mlp_ln.bias").0,
            &t("decoder.blocks.1.mlp_ln.bias").1
        ),
        (0, &vec![S as i32])
    );
    assert!(!g.tensors.contains_key("encoder.blocks.0.attn.key.bias"));
    assert!(
        !g.tensors
            .contains_key("decoder.blocks.0.cross_attn.key.bias")
    );

    let data = |name: &str| as_f32(t(name).0, &t(name).2);
    // Fused q/k/v split by rows, key bias dropped.
    let qkv = &v["encoder/layer_0/self_attention/linear_0/weight"];
    assert_eq!(
        data("encoder.blocks.0.attn.query.weight"),
        rows(qkv, S, 0, S)
    );
    assert_eq!(data("encoder.blocks.0.attn.key.weight"), rows(qkv, S, S, S));
    assert_eq!(
        data("encoder.blocks.0.attn.value.weight"),
        rows(qkv, S, 2 * S, S)
    );
    let qkv_b = &v["encoder/layer_0/self_attention/linear_0/bias"];
    assert_eq!(
        data("encoder.blocks.0.attn.query.bias"),
        qkv_b[..S].to_vec()
    );
    assert_eq!(
        data("encoder.blocks.0.attn.value.bias"),
        qkv_b[2 * S..].to_vec()
    );
    // Cross attention: query separate, key/value fused.
    let kv = &v["decoder/layer_1/attention/linear_1/weight"];
    assert_eq!(
        data("decoder.blocks.1.cross_attn.key.weight"),
        f16_round(&rows(kv, S, 0, S))
    );
    assert_eq!(
        data("decoder.blocks.1.cross_attn.value.weight"),
        f16_round(&rows(kv, S, S, S))
    );
    assert_eq!(
        data("decoder.blocks.1.cross_attn.value.bias"),
        v["decoder/layer_1/attention/linear_1/bias"][S..].to_vec()
    );
    assert_eq!(
        data("decoder.blocks.1.cross_attn.query.weight"),
        v["decoder/layer_1/attention/linear_0/weight"]
    );
    assert_eq!(
        data("decoder.blocks.1.cross_attn.out.weight"),
        v["decoder/layer_1/attention/linear_2/weight"]
    );
    assert_eq!(
        data("decoder.blocks.0.attn.out.weight"),
        v["decoder/layer_0/self_attention/linear_1/weight"]
    );
    // Layer norms (gamma/beta -> weight/bias), conv, positional, bf16, int8.
    assert_eq!(
        data("decoder.blocks.0.cross_attn_ln.weight"),
        v["decoder/layer_0/attention/layer_norm/gamma"]
    );
    assert_eq!(data("encoder.ln_post.bias"), v["encoder/layer_norm/beta"]);
    assert_eq!(data("decoder.ln.weight"), v["decoder/layer_norm/gamma"]);
    assert_eq!(data("encoder.conv1.weight"), v["encoder/conv1/weight"]);
    assert_eq!(
        data("encoder.conv2.weight"),
        f16_round(&v["encoder/conv2/weight"])
    );
    assert_eq!(data("encoder.conv2.bias"), v["encoder/conv2/bias"]);
    assert_eq!(
        data("decoder.positional_embedding"),
        v["decoder/position_encodings/encodings"]
    );
    assert_eq!(
        data("encoder.blocks.0.attn.out.weight"),
        f16_round(&v["encoder/layer_0/self_attention/linear_1/weight"])
    );
    assert_eq!(
        data("encoder.blocks.0.mlp.0.weight"),
        f16_round(&v["encoder/layer_0/ffn/linear_0/weight"])
    );
    assert_eq!(
        data("encoder.blocks.0.mlp.2.weight"),
        f16_round(&v["encoder/layer_0/ffn/linear_1/weight"])
    );
    assert_eq!(
        data("decoder.token_embedding.weight"),
        f16_round(&v["decoder/embeddings/weight"])
    );
}

/// Converts `src` with `quantization` and checks what whisper.cpp's quantizer would have
/// written: the quantized `ftype`, every 2-D weight matrix (and only those) of ggml type
/// `ggml_type`, each block within `bound(block)` of the source and byte for byte `encode`'s.
fn check_quantized_conversion(
    src: &TestDir,
    quantization: Quantization,
    (ggml_type, ftype): (i32, i32),
    encode: fn(&[f32], &mut Vec<u8>),
    bound: fn(&[f32]) -> f32,
) -> Ggml {
    let out = TestDir::new();
    let dest = out.path().join("quantized.bin");
    let opts = ImportOptions { quantization };
    let report = import_ct2(src.path(), &dest, &opts, &mut |_, _| {}).unwrap();
    assert_eq!(report.size_name, "tiny");
    assert_eq!(report.bytes_written, fs::metadata(&dest).unwrap().len());
    let g = parse_ggml(&fs::read(&dest).unwrap());
    assert_eq!(g.hparams[10], ftype);
    let v = &synthetic().values;
    let t = |name: &str| &g.tensors[name];
    // Every 2-D weight matrix is quantized; everything else keeps its f16/f32 type.
    for (name, (ty, ne, _)) in &g.tensors {
        let expected = if name.ends_with("conv1.weight") || name.ends_with("conv2.weight") {
            1
        } else if ne.len() == 2 && !name.contains("conv") && !name.contains("positional") {
            ggml_type
        } else {
            0
        };
        assert_eq!(*ty, expected, "{name} {ne:?}");
    }
    let close = |got: Vec<f32>, want: &[f32]| {
        assert_eq!(got.len(), want.len());
        for (b, (g, w)) in got.chunks(32).zip(want.chunks(32)).enumerate() {
            let limit = bound(w);
            for (a, c) in g.iter().zip(w) {
                assert!((a - c).abs() <= limit, "block {b}: {a} vs {c}");
            }
        }
    };
    let emb = t("decoder.token_embedding.weight");
    close(as_f32(emb.0, &emb.2), &v["decoder/embeddings/weight"]);
    let key_rows = rows(
        &v["encoder/layer_0/self_attention/linear_0/weight"],
        S,
        S,
        S,
    );
    let k = t("encoder.blocks.0.attn.key.weight");
    close(as_f32(k.0, &k.2), &key_rows);
    // The block bytes are exactly what the encoder produces from the f32 values.
    let mut expect = Vec::new();
    encode(&key_rows, &mut expect);
    assert_eq!(k.2, expect);
    g
}

#[test]
fn converts_synthetic_model_to_q8_0_with_vocabulary_json() {
    let src = model_dir();
    fs::remove_file(src.path().join("vocabulary.txt")).unwrap();
    fs::write(
        src.path().join("vocabulary.json"),
        serde_json::to_string(&synthetic_vocab()).unwrap(),
    )
    .unwrap();
    let g = check_quantized_conversion(
        &src,
        Quantization::Q8_0,
        (8, 2007),
        blocks::quantize_q8_0,
        |block| {
            let amax = block.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            amax / 127.0 * 0.5 + amax * 2e-3
        },
    );
    assert_eq!(g.vocab[0], b" the");
}

#[test]
fn converts_synthetic_model_to_q5_1() {
    let src = model_dir();
    check_quantized_conversion(
        &src,
        Quantization::Q5_1,
        (7, 2009),
        blocks::quantize_q5_1,
        |block| {
            let min = block.iter().fold(f32::MAX, |m, &x| m.min(x));
            let max = block.iter().fold(f32::MIN, |m, &x| m.max(x));
            let step = (max - min) / 31.0;
            // Half a step, plus the f16 rounding of the step (up to 31 of them) and minimum.
            step * 0.5 + (31.0 * step + min.abs()) / 2048.0 + (max - min) * 1e-6
        },
    );
}

#[test]
fn tokenizer_json_is_a_fallback_vocabulary() {
    let src = model_dir();
    fs::remove_file(src.path().join("vocabulary.txt")).unwrap();
    let mut vocab = serde_json::Map::new();
    for i in 0..N_ORDINARY_EN {
        vocab.insert(synthetic_token(i), serde_json::json!(i));
    }
    let tok = serde_json::json!({
        "model": { "type": "BPE", "vocab": vocab },
        "added_tokens": [{ "id": 50256, "content": "<|endoftext|>" }, { "id": 50257, "content": "<|startoftranscript|>" }]
    });
    fs::write(src.path().join("tokenizer.json"), tok.to_string()).unwrap();
    let out = TestDir::new();
    let dest = out.path().join("m.bin");
    import_ct2(src.path(), &dest, &f16_opts(), &mut |_, _| {}).unwrap();
    let g = parse_ggml(&fs::read(&dest).unwrap());
    assert_eq!(g.vocab.len(), N_ORDINARY_EN);
    assert_eq!(g.vocab[0], b" the");
}

#[test]
fn replaces_an_existing_destination_only_on_success() {
    let src = model_dir();
    let out = TestDir::new();
    let dest = out.path().join("m.bin");
    fs::write(&dest, "old").unwrap();
    fs::remove_file(src.path().join("config.json")).unwrap();
    assert!(import_ct2(src.path(), &dest, &f16_opts(), &mut |_, _| {}).is_err());
    assert_eq!(fs::read(&dest).unwrap(), b"old");
    assert_eq!(listing(out.path()), vec!["m.bin".to_string()]);
    fs::write(src.path().join("config.json"), "{}").unwrap();
    import_ct2(src.path(), &dest, &f16_opts(), &mut |_, _| {}).unwrap();
    assert_ne!(fs::read(&dest).unwrap(), b"old");
    assert_eq!(listing(out.path()), vec!["m.bin".to_string()]);
}

// ------------------------------------------------------------ bad inputs

#[test]
fn missing_files_are_reported() {
    let src = model_dir();
    fs::remove_file(src.path().join("config.json")).unwrap();
    assert!(
        matches!(import_err(src.path()), Ct2Error::MissingFile { path } if path.ends_with("config.json"))
    );

    let src = model_dir();
    fs::remove_file(src.path().join("model.bin")).unwrap();
    assert!(
        matches!(import_err(src.path()), Ct2Error::MissingFile { path } if path.ends_with("model.bin"))
    );

    let src = model_dir();
    fs::remove_file(src.path().join("vocabulary.txt")).unwrap();
    assert!(matches!(
        import_err(src.path()),
        Ct2Error::MissingVocabulary { .. }
    ));

    let empty = TestDir::new();
    assert!(matches!(
        import_err(empty.path()),
        Ct2Error::MissingFile { .. }
    ));
    assert!(matches!(
        import_err(&empty.path().join("nope")),
        Ct2Error::MissingFile { .. }
    ));
}

#[test]
fn bad_config_is_reported() {
    let src = model_dir();
    fs::write(src.path().join("config.json"), "{ not json").unwrap();
    assert!(matches!(import_err(src.path()), Ct2Error::Config { .. }));
    fs::write(src.path().join("config.json"), "[1, 2]").unwrap();
    assert!(matches!(import_err(src.path()), Ct2Error::Config { .. }));
}

/// A directory with a valid config and vocabulary and the given model.bin.
fn dir_with_model(model_bin: &[u8]) -> TestDir {
    let d = model_dir();
    fs::write(d.path().join("model.bin"), model_bin).unwrap();
    d
}

fn small_var(name: &str) -> Var {
    Var {
        name: name.into(),
        shape: vec![2],
        dtype: 0,
        bytes: vec![0; 8],
    }
}

#[test]
fn wrong_version_or_spec_is_rejected() {
    for version in [0u32, 3, 7, 0x6767_6d6c, u32::MAX] {
        let d = dir_with_model(&serialize(version, "WhisperSpec", &[small_var("a")], &[]));
        assert!(
            matches!(import_err(d.path()), Ct2Error::UnsupportedVersion { version: v, .. } if v == version)
        );
    }
    let d = dir_with_model(&serialize(6, "TransformerSpec", &[small_var("a")], &[]));
    assert!(matches!(import_err(d.path()), Ct2Error::NotWhisper { .. }));
    // A ggml file is not a CTranslate2 model.
    let mut ggml = 0x6767_6d6cu32.to_le_bytes().to_vec();
    ggml.extend([0u8; 64]);
    let d = dir_with_model(&ggml);
    assert!(matches!(
        import_err(d.path()),
        Ct2Error::UnsupportedVersion { .. }
    ));
}

#[test]
fn absurd_counts_and_dimensions_are_rejected() {
    let header = |count: u32| {
        let mut b = 6u32.to_le_bytes().to_vec();
        ct2_string(&mut b, "WhisperSpec");
        b.extend(3u32.to_le_bytes());
        b.extend(count.to_le_bytes());
        b
    };
    // Variable count far beyond the file size.
    let d = dir_with_model(&header(u32::MAX));
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));

    // Rank too large.
    let mut b = header(1);
    ct2_string(&mut b, "x");
    b.push(200);
    b.extend([0u8; 64]);
    let d = dir_with_model(&b);
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));

    // Dimensions whose product overflows.
    let mut b = header(1);
    ct2_string(&mut b, "x");
    b.push(3);
    for _ in 0..3 {
        b.extend(u32::MAX.to_le_bytes());
    }
    b.push(0);
    b.extend(4u32.to_le_bytes());
    b.extend([0u8; 4]);
    let d = dir_with_model(&b);
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));

    // Byte count inconsistent with the shape, unknown dtype, huge byte count.
    for (dtype, nbytes) in [(0u8, 12u32), (9, 8), (0, u32::MAX)] {
        let mut b = header(1);
        ct2_string(&mut b, "x");
        b.push(1);
        b.extend(2u32.to_le_bytes());
        b.push(dtype);
        b.extend(nbytes.to_le_bytes());
        b.extend([0u8; 8]);
        let d = dir_with_model(&b);
        let e = import_err(d.path());
        assert!(matches!(e, Ct2Error::Malformed { .. }), "{e}");
    }

    // A string that is not NUL-terminated, and a duplicate variable.
    let mut b = header(1);
    b.extend(2u16.to_le_bytes());
    b.extend(b"ab");
    b.extend([0u8; 16]);
    let d = dir_with_model(&b);
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));
    let d = dir_with_model(&serialize(
        6,
        "WhisperSpec",
        &[small_var("a"), small_var("a")],
        &[],
    ));
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));

    // Alias count beyond the file, and an alias to nothing.
    let mut b = serialize(6, "WhisperSpec", &[small_var("a")], &[]);
    let n = b.len();
    b[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    let d = dir_with_model(&b);
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));
    let d = dir_with_model(&serialize(
        6,
        "WhisperSpec",
        &[small_var("a")],
        &[("b", "c")],
    ));
    assert!(matches!(import_err(d.path()), Ct2Error::Malformed { .. }));
}

#[test]
fn truncated_model_is_rejected_at_every_cut() {
    let full = &synthetic().model_bin;
    // Every cut inside the first variables' headers and data...
    let mut cuts: Vec<usize> = (0..700).collect();
    // ...inside the embedding data, and inside the trailing aliases.
    cuts.extend([
        full.len() / 3,
        full.len() / 2,
        full.len() - 60,
        full.len() - 1,
    ]);
    let d = model_dir();
    let out = TestDir::new();
    let dest = out.path().join("m.bin");
    for cut in cuts {
        fs::write(d.path().join("model.bin"), &full[..cut]).unwrap();
        let r = import_ct2(d.path(), &dest, &f16_opts(), &mut |_, _| {});
        let e = r.expect_err("truncated file accepted");
        // A cut inside the variable count fails its bound check before any read hits the end.
        assert!(
            matches!(
                e,
                Ct2Error::Truncated { .. }
                    | Ct2Error::Malformed { .. }
                    | Ct2Error::UnsupportedVersion { .. }
            ),
            "cut {cut}: {e}"
        );
        assert!(listing(out.path()).is_empty(), "cut {cut} left a file");
    }
}

#[test]
fn corrupted_header_bytes_never_panic() {
    let full = &synthetic().model_bin;
    let d = model_dir();
    // Without a vocabulary every import stops before writing, so each
    // corrupted header is exercised through indexing and shape checks only.
    fs::remove_file(d.path().join("vocabulary.txt")).unwrap();
    let out = TestDir::new();
    let dest = out.path().join("m.bin");
    // The header and the first variable headers: names, ranks, dims, dtypes, sizes.
    let header_end = 96;
    let mut model = full.to_vec();
    for pos in 0..header_end {
        for mask in [0x01u8, 0xFF] {
            let old = model[pos];
            model[pos] = old ^ mask;
            fs::write(d.path().join("model.bin"), &model).unwrap();
            assert!(import_ct2(d.path(), &dest, &f16_opts(), &mut |_, _| {}).is_err());
            model[pos] = old;
            assert!(listing(out.path()).is_empty());
        }
    }
}

fn with_vars(edit: impl FnOnce(&mut Vec<Var>)) -> TestDir {
    let mut vars = synthetic().vars.clone();
    edit(&mut vars);
    dir_with_model(&serialize(6, "WhisperSpec", &vars, ALIASES))
}

#[test]
fn missing_or_misshapen_variables_are_rejected() {
    let d = with_vars(|v| v.retain(|x| x.name != "decoder/layer_1/attention/linear_2/bias"));
    let e = import_err(d.path());
    assert!(
        matches!(&e, Ct2Error::MissingVariable { name, .. } if name == "decoder/layer_1/attention/linear_2/bias"),
        "{e}"
    );

    // A gap in the layer numbering.
    let d = with_vars(|v| v.retain(|x| !x.name.starts_with("decoder/layer_0/")));
    let e = import_err(d.path());
    assert!(
        matches!(&e, Ct2Error::MissingVariable { name, .. } if name.starts_with("decoder/layer_0")),
        "{e}"
    );

    // Wrong shape for a fused projection.
    let d = with_vars(|v| {
        let x = v
            .iter_mut()
            .find(|x| x.name == "encoder/layer_0/self_attention/linear_0/bias")
            .unwrap();
        x.shape = vec![2 * S as u32];
        x.bytes.truncate(2 * S * 4);
    });
    assert!(matches!(import_err(d.path()), Ct2Error::BadShape { .. }));

    // Unknown width.
    let d = with_vars(|v| {
        let x = v
            .iter_mut()
            .find(|x| x.name == "encoder/conv1/weight")
            .unwrap();
        x.shape = vec![100, N_MELS as u32, 3];
        x.bytes.truncate(100 * N_MELS * 3 * 2);
    });
    assert!(matches!(import_err(d.path()), Ct2Error::Unsupported { .. }));

    // int8 weights without their scale.
    let d = with_vars(|v| v.retain(|x| x.name != "encoder/layer_0/ffn/linear_0/weight_scale"));
    assert!(matches!(
        import_err(d.path()),
        Ct2Error::UnsupportedVariable { .. }
    ));

    // Heads that do not divide the width.
    let d = with_vars(|v| {
        let x = v
            .iter_mut()
            .find(|x| x.name == "encoder/num_heads")
            .unwrap();
        x.bytes = 7i16.to_le_bytes().to_vec();
    });
    assert!(matches!(import_err(d.path()), Ct2Error::Unsupported { .. }));
}

#[test]
fn vocabulary_mismatches_are_rejected() {
    let src = model_dir();
    let refused = |tokens: &[String]| {
        write_vocab_txt(src.path(), tokens);
        matches!(import_err(src.path()), Ct2Error::Vocabulary { .. })
    };
    let mut short = synthetic_vocab();
    short.pop();
    assert!(refused(&short));

    // <|endoftext|> where a multilingual vocabulary has it.
    let mut shifted = synthetic_vocab();
    shifted.insert(0, "extra".into());
    shifted.pop();
    assert!(refused(&shifted));

    // A token outside the byte alphabet.
    let mut foreign = synthetic_vocab();
    foreign[5] = "日本".into();
    assert!(refused(&foreign));

    fs::remove_file(src.path().join("vocabulary.txt")).unwrap();
    fs::write(src.path().join("vocabulary.json"), "{\"a\": 1}").unwrap();
    assert!(matches!(
        import_err(src.path()),
        Ct2Error::Vocabulary { .. }
    ));
}

#[test]
fn unwritable_destination_is_an_error() {
    let src = model_dir();
    let out = TestDir::new();
    let dest = out.path().join("no-such-dir").join("m.bin");
    let e = import_ct2(src.path(), &dest, &f16_opts(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, Ct2Error::Write { .. }), "{e}");
    assert!(listing(out.path()).is_empty());
}

#[test]
fn plan_matches_whisper_cpp_tensor_count() {
    let h = HParams {
        n_vocab: 51865,
        n_audio_ctx: 1500,
        n_audio_state: 512,
        n_audio_layer: 6,
        n_text_ctx: 448,
        n_text_state: 512,
        n_text_layer: 6,
        n_mels: 80,
        ..Default::default()
    };
    let plan = tensor_plan(&h);
    assert_eq!(plan.len(), 11 + 15 * 6 + 24 * 6);
    let names: BTreeSet<&str> = plan.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), plan.len());
}
