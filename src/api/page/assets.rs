//! The page's files, compiled into the binary: no CDN, no font or script from elsewhere.

/// One file of the page.
pub struct Asset {
    /// The name under `/assets/` (the page itself is `/`).
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
}

/// The page, served at `/`.
pub static INDEX: Asset = Asset {
    name: "index.html",
    content_type: "text/html; charset=utf-8",
    body: include_bytes!("files/index.html"),
};

/// Answered to a sign-in link that was used, is late or never existed.
pub static LINK_SPENT: Asset = Asset {
    name: "link-spent.html",
    content_type: "text/html; charset=utf-8",
    body: include_bytes!("files/link-spent.html"),
};

/// Every file under `/assets/`.
pub static ASSETS: &[Asset] = &[
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("files/app.js"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("files/style.css"),
    },
    Asset {
        name: "icon.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("files/icon.svg"),
    },
];

/// The asset called `name`.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.name == name)
}
