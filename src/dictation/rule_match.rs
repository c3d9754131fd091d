//! Which workflow, and which profile, applies to an application context (both are rules): app
//! ids compared case-insensitively, and URL patterns with `*` wildcards.

use super::context::AppContext;
use crate::store::rules::Rule;

/// The rule that applies to `ctx`: among the enabled rules (workflows or profiles) that list its
/// app id in `bundle_identifiers` (compared case-insensitively) or have a URL pattern matching
/// its URL (see [`url_matches`]), the one with the lowest `priority`; on a tie the first in
/// `rules` (the store lists them by priority, then in the order they were added).
pub fn matching_rule<'a, T>(rules: &'a [Rule<T>], ctx: &AppContext) -> Option<&'a Rule<T>> {
    rules
        .iter()
        .filter(|rule| rule.enabled && applies_to(rule, ctx))
        .min_by_key(|rule| rule.priority)
}

/// Whether `workflow` (a rule of any kind) names the context's app or matches its URL (enabled
/// or not).
pub fn applies_to<T>(workflow: &Rule<T>, ctx: &AppContext) -> bool {
    let app = ctx
        .app_id
        .as_deref()
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_lowercase);
    if let Some(app) = app
        && workflow
            .bundle_identifiers
            .iter()
            .any(|id| id.trim().to_lowercase() == app)
    {
        return true;
    }
    ctx.url.as_deref().is_some_and(|url| {
        workflow
            .url_patterns
            .iter()
            .any(|pattern| url_matches(pattern, url))
    })
}

/// Whether a workflow's URL pattern matches `url`.
///
/// Both are read without their scheme (`https://`, ignored) and split into a host (user info
/// dropped, compared case-insensitively, with an optional `:port`) and the rest (path, query and
/// fragment, case-sensitive). In a pattern, `*` stands for any run of characters, `/` included.
/// - Host: a host without `*` matches itself and its subdomains (`github.com` matches
///   `github.com` and `gist.github.com`, not `notgithub.com`); a host with `*` must match the
///   whole host (`*.example.org` matches `a.example.org`, not `example.org`). A pattern with a
///   port (digits or `*`) only matches URLs with that port; one without ignores the port.
/// - Rest: a pattern with no path matches every page of its host. A path matches a URL whose
///   path starts with it and goes on with `/`, `?`, `#` or nothing (`github.com/rust-lang`
///   matches `github.com/rust-lang/rust` and `github.com/rust-lang?tab=repositories`, not
///   `github.com/rust-lang-nursery`); a pattern path ending in `/` matches everything below it.
///
/// A blank pattern matches nothing.
pub fn url_matches(pattern: &str, url: &str) -> bool {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return false;
    }
    let pattern = UrlParts::parse(pattern);
    let url = UrlParts::parse(url.trim());
    host_matches(&pattern.host, &url.host)
        && match pattern.port {
            Some(port) => url
                .port
                .is_some_and(|p| glob(port.as_bytes(), p.as_bytes())),
            None => true,
        }
        && rest_matches(&pattern.rest, &url.rest)
}

/// A URL (or a URL pattern) without its scheme.
struct UrlParts<'a> {
    /// Lower case, without a trailing dot.
    host: String,
    port: Option<&'a str>,
    /// Path, query and fragment; starts with `/` (an empty path reads as `/`).
    rest: String,
}

impl<'a> UrlParts<'a> {
    fn parse(url: &'a str) -> Self {
        let url = strip_scheme(url);
        let end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, rest) = url.split_at(end);
        let authority = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let (host, port) = split_port(authority);
        let host = host.strip_suffix('.').unwrap_or(host).to_lowercase();
        let rest = if rest.starts_with('/') {
            rest.to_owned()
        } else {
            format!("/{rest}")
        };
        UrlParts { host, port, rest }
    }
}

fn strip_scheme(url: &str) -> &str {
    match url.split_once("://") {
        Some((scheme, rest))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            rest
        }
        _ => url,
    }
}

/// `host:port` into host and port; a port is digits (or `*` in patterns). IPv6 hosts keep their
/// brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let colon = match authority.strip_prefix('[') {
        Some(inner) => inner.find(']').map(|end| end + 2),
        None => authority.rfind(':'),
    };
    match colon.and_then(|at| Some((at, authority.get(at..)?.strip_prefix(':')?))) {
        Some((at, port))
            if !port.is_empty() && (port == "*" || port.bytes().all(|b| b.is_ascii_digit())) =>
        {
            (&authority[..at], Some(port))
        }
        _ => (authority, None),
    }
}

fn host_matches(pattern: &str, host: &str) -> bool {
    if pattern.contains('*') {
        return glob(pattern.as_bytes(), host.as_bytes());
    }
    host == pattern
        || (!pattern.is_empty()
            && host
                .strip_suffix(pattern)
                .is_some_and(|sub| sub.ends_with('.')))
}

fn rest_matches(pattern: &str, rest: &str) -> bool {
    if pattern == "/" {
        return true;
    }
    let (pattern, rest) = (pattern.as_bytes(), rest.as_bytes());
    (1..=rest.len())
        .filter(|&end| {
            end == rest.len() || matches!(rest[end], b'/' | b'?' | b'#') || rest[end - 1] == b'/'
        })
        .any(|end| glob(pattern, &rest[..end]))
}

/// Whether `pattern` (where `*` matches any run of bytes) matches all of `text`.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where the last `*` was, and how much of the text it has taken so far.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::workflows::Workflow;
    use proptest::prelude::*;
    use uuid::Uuid;

    fn workflow(name: &str, priority: i64, apps: &[&str], urls: &[&str]) -> Workflow {
        Workflow {
            id: Uuid::new_v4(),
            name: name.into(),
            enabled: true,
            priority,
            bundle_identifiers: apps.iter().map(|s| s.to_string()).collect(),
            url_patterns: urls.iter().map(|s| s.to_string()).collect(),
            ..Workflow::default()
        }
    }

    fn app(id: &str) -> AppContext {
        AppContext {
            app_id: Some(id.into()),
            ..AppContext::default()
        }
    }

    fn page(url: &str) -> AppContext {
        AppContext {
            url: Some(url.into()),
            ..AppContext::default()
        }
    }

    #[test]
    fn the_enabled_workflow_with_the_lowest_priority_wins() {
        let mut mail = workflow("Mail", 1, &["thunderbird"], &[]);
        let code = workflow("Code", 2, &["Code", "thunderbird"], &["github.com"]);
        let late = workflow("Late", 2, &["code"], &[]);
        let workflows = vec![mail.clone(), code.clone(), late];
        let name = |ctx: &AppContext| matching_rule(&workflows, ctx).map(|w| w.name.as_str());
        assert_eq!(name(&app("Thunderbird")), Some("Mail"));
        assert_eq!(name(&app("CODE")), Some("Code"), "ties keep the list order");
        assert_eq!(name(&page("https://github.com/x")), Some("Code"));
        assert_eq!(name(&app("firefox")), None);
        assert_eq!(name(&AppContext::default()), None);
        mail.enabled = false;
        let workflows = [mail, code];
        assert_eq!(
            matching_rule(&workflows, &app("thunderbird")).map(|w| w.name.as_str()),
            Some("Code")
        );
    }

    #[test]
    fn a_blank_app_id_or_identifier_matches_nothing() {
        let workflows = [workflow("Blank", 0, &["", " "], &["", "  "])];
        assert!(matching_rule(&workflows, &app("")).is_none());
        assert!(matching_rule(&workflows, &app(" ")).is_none());
        assert!(matching_rule(&workflows, &page("https://example.org")).is_none());
    }

    #[test]
    fn bare_domains_match_their_host_and_subdomains() {
        assert!(url_matches("github.com", "https://github.com"));
        assert!(url_matches("github.com", "http://GIST.GitHub.com./x?y#z"));
        assert!(url_matches("github.com", "github.com/rust-lang"));
        assert!(url_matches(
            "GitHub.com",
            "https://user:pw@github.com:8443/"
        ));
        assert!(!url_matches("github.com", "https://notgithub.com"));
        assert!(!url_matches("github.com", "https://github.com.evil.org"));
        assert!(!url_matches("github.com", "https://evil.org/github.com"));
        assert!(url_matches("https://github.com", "http://github.com/a"));
    }

    #[test]
    fn wildcards_and_ports() {
        assert!(url_matches("*.example.org", "https://a.b.example.org/x"));
        assert!(!url_matches("*.example.org", "https://example.org/x"));
        assert!(url_matches("docs.*.com", "https://docs.rs.com"));
        assert!(url_matches("*", "https://anything.test/at/all"));
        assert!(url_matches("localhost:3000", "http://localhost:3000/app"));
        assert!(!url_matches("localhost:3000", "http://localhost:8080/app"));
        assert!(!url_matches("localhost:3000", "http://localhost/app"));
        assert!(url_matches("localhost", "http://localhost:8080/app"));
        assert!(url_matches("localhost:*", "http://localhost:8080/app"));
        assert!(url_matches("[::1]:8080", "http://[::1]:8080/"));
        assert!(!url_matches("[::1]:8080", "http://[::1]:9090/"));
    }

    #[test]
    fn paths_match_whole_segments_from_the_start() {
        let pattern = "github.com/rust-lang";
        assert!(url_matches(pattern, "https://github.com/rust-lang"));
        assert!(url_matches(
            pattern,
            "https://github.com/rust-lang/rust/issues"
        ));
        assert!(url_matches(
            pattern,
            "https://github.com/rust-lang?tab=repositories"
        ));
        assert!(url_matches(pattern, "https://github.com/rust-lang#top"));
        assert!(!url_matches(
            pattern,
            "https://github.com/rust-lang-nursery"
        ));
        assert!(!url_matches(pattern, "https://github.com/Rust-Lang"));
        assert!(!url_matches(pattern, "https://github.com/"));
        assert!(url_matches(
            "github.com/rust-lang/",
            "https://github.com/rust-lang/rust"
        ));
        assert!(url_matches(
            "github.com/*/issues",
            "https://github.com/a/b/issues/1"
        ));
        assert!(!url_matches(
            "github.com/*/issues",
            "https://github.com/a/b/pulls"
        ));
        assert!(url_matches(
            "mail.google.com/mail/u/*",
            "https://mail.google.com/mail/u/0/#inbox"
        ));
        assert!(url_matches("example.org/", "https://example.org"));
        assert!(url_matches("example.org?q=1", "https://example.org/?q=1"));
    }

    #[test]
    fn blank_patterns_and_local_files() {
        assert!(!url_matches("", "https://example.org"));
        assert!(!url_matches("   ", "https://example.org"));
        assert!(url_matches(
            "file:///home/me/notes",
            "file:///home/me/notes/today.md"
        ));
        assert!(!url_matches(
            "file:///home/me/notes",
            "https://example.org/home/me/notes"
        ));
    }

    const APPS: [&str; 4] = ["firefox", "Code", "org.gnome.Evolution", "thunderbird"];
    const PATTERNS: [&str; 4] = [
        "github.com",
        "*.example.org",
        "docs.rs/serde",
        "example.org/*/x",
    ];
    const URLS: [&str; 5] = [
        "https://github.com/a",
        "https://api.example.org/",
        "https://docs.rs/serde/latest",
        "https://example.org/a/x",
        "https://unrelated.test",
    ];

    fn workflows() -> impl Strategy<Value = Vec<Workflow>> {
        let one = (
            any::<bool>(),
            0i64..4,
            proptest::sample::subsequence(APPS.to_vec(), 0..=2),
            proptest::sample::subsequence(PATTERNS.to_vec(), 0..=2),
        )
            .prop_map(|(enabled, priority, apps, urls)| Workflow {
                enabled,
                ..workflow("w", priority, &apps, &urls)
            });
        proptest::collection::vec(one, 0..8)
    }

    fn contexts() -> impl Strategy<Value = AppContext> {
        (
            proptest::option::of((proptest::sample::select(APPS.to_vec()), any::<bool>())),
            proptest::option::of(proptest::sample::select(URLS.to_vec())),
        )
            .prop_map(|(app, url)| AppContext {
                app_name: None,
                app_id: app.map(|(id, upper)| {
                    if upper {
                        id.to_uppercase()
                    } else {
                        id.to_owned()
                    }
                }),
                url: url.map(str::to_owned),
            })
    }

    proptest! {
        #[test]
        fn matching_picks_what_sorting_by_priority_would(workflows in workflows(), ctx in contexts()) {
            let mut sorted: Vec<&Workflow> = workflows.iter().collect();
            sorted.sort_by_key(|w| w.priority); // stable: ties keep their order
            let expected = sorted.into_iter().find(|w| w.enabled && applies_to(w, &ctx));
            let found = matching_rule(&workflows, &ctx);
            prop_assert_eq!(found.map(|w| w.id), expected.map(|w| w.id));
            if let Some(found) = found {
                prop_assert!(found.enabled);
            }
        }

        #[test]
        fn a_bare_domain_matches_its_subdomains_on_any_scheme_path_and_case(
            domain in "[a-z]{1,8}\\.[a-z]{2,4}",
            sub in proptest::option::of("[a-z0-9]{1,6}(\\.[a-z0-9]{1,6})?"),
            scheme in proptest::sample::select(vec!["http", "https", "ftp"]),
            path in "(/[A-Za-z0-9._~%-]{0,6}){0,3}(\\?[a-z=&]{0,8})?",
            upper in any::<bool>(),
        ) {
            let host = match &sub {
                Some(sub) => format!("{sub}.{domain}"),
                None => domain.clone(),
            };
            let host = if upper { host.to_uppercase() } else { host };
            let url = format!("{scheme}://{host}{path}");
            prop_assert!(url_matches(&domain, &url), "{} vs {}", domain, url);
            let lookalike = format!("{scheme}://x{domain}{path}");
            prop_assert!(!url_matches(&domain, &lookalike), "{} vs {}", domain, lookalike);
        }

        #[test]
        fn stars_in_place_of_any_part_of_a_path_still_match(
            path in "(/[a-z0-9]{1,5}){1,4}",
            cuts in proptest::collection::vec((0usize..24, 0usize..6), 0..3),
        ) {
            // The leading `/` stays; any other part of the path may become a `*`.
            let mut rest = path[1..].to_owned();
            for (start, len) in cuts {
                let start = start.min(rest.len());
                let end = (start + len).min(rest.len());
                rest.replace_range(start..end, "*");
            }
            let pattern = format!("/{rest}");
            prop_assert!(url_matches(&format!("example.org{pattern}"), &format!("https://example.org{path}")),
                "{} vs {}", pattern, path);
        }
    }
}
