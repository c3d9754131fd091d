//! The CLI end to end against the real server: history, dictionary, rules, export and import,
//! with their plain and `--json` output and exit codes.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use common::{SpawnedServer, closed_port, sample_backup};
use predicates::prelude::*;
use serde_json::Value;
use verbatim::store::{NewHistoryEntry, Store};

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(common::binary());
    cmd.env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN");
    cmd
}

fn json_out(cmd: &mut Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// Folder entries other than `keep`.
fn others(folder: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !keep.contains(&name.as_str()))
        .collect()
}

#[test]
fn history_lists_searches_pages_and_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    // Written by another process through the Store API while the server runs.
    let store = Store::open(&tmp.path().join("verbatim.sqlite3")).unwrap();
    let now = chrono::Utc::now();
    let written = store
        .insert_history_many(&[
            NewHistoryEntry {
                text: "Le café est prêt".into(),
                app_name: Some("Éditeur".into()),
                timestamp: Some(now - chrono::Duration::seconds(20)),
                engine: "whisper".into(),
                ..NewHistoryEntry::default()
            },
            NewHistoryEntry {
                text: "Meeting notes for Monday".into(),
                app_name: Some("Terminal".into()),
                timestamp: Some(now - chrono::Duration::seconds(10)),
                engine: "whisper".into(),
                ..NewHistoryEntry::default()
            },
            NewHistoryEntry {
                text: "Third entry".into(),
                timestamp: Some(now),
                engine: "whisper".into(),
                ..NewHistoryEntry::default()
            },
        ])
        .unwrap();
    let cafe_id = written[0].id.to_string().to_uppercase();
    cli(tmp.path()).arg("history").assert().success().stdout(
        predicate::str::starts_with("ID")
            .and(predicate::str::contains("TIME  "))
            .and(predicate::str::contains("Le café est prêt"))
            .and(predicate::str::contains("Showing 1-3 of 3.")),
    );
    cli(tmp.path())
        .args(["history", "list", "--query", "CAFE"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains(&cafe_id).and(predicate::str::contains("Showing 1-1 of 1.")),
        );
    cli(tmp.path())
        .args(["history", "--limit", "1", "--offset", "1"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Meeting notes")
                .and(predicate::str::contains("Showing 2-2 of 3.")),
        );
    let page = json_out(cli(tmp.path()).args(["history", "--query", "éditeur", "--json"]));
    assert_eq!(page["total"], 1);
    assert_eq!(page["entries"][0]["id"], cafe_id.as_str());
    assert_eq!(page["limit"], 50);
    // The start of an id is enough, as `history` shows it; too short or unknown says so.
    cli(tmp.path())
        .args(["history", "delete", &cafe_id[..8].to_lowercase()])
        .assert()
        .success()
        .stdout(format!("Deleted history entry {cafe_id}.\n"));
    cli(tmp.path())
        .args(["history", "delete", &cafe_id])
        .assert()
        .code(3)
        .stderr("Error: Server returned 404 - History entry not found\n");
    cli(tmp.path())
        .args(["history", "delete", "not-an-id"])
        .assert()
        .code(1)
        .stderr("Error: No history entry has the id 'not-an-id'. `verbatim history` shows them.\n");
    cli(tmp.path())
        .args(["history", "delete", "abc"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("give at least 4 characters"));
    cli(tmp.path())
        .args(["history", "--query", "café"])
        .assert()
        .success()
        .stdout("No history entries match.\n");
}

#[test]
fn dictionary_terms_and_corrections() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    cli(tmp.path())
        .args(["dictionary", "terms", "add", "Kubernetes", "café", "CAFE"])
        .assert()
        .success()
        .stdout("café\nKubernetes\n2 terms in all.\n");
    cli(tmp.path())
        .args(["dictionary", "terms", "add"])
        .assert()
        .code(1);
    cli(tmp.path())
        .args(["dictionary", "terms"])
        .assert()
        .success()
        .stdout("café\nKubernetes\n2 terms in all.\n");
    cli(tmp.path())
        .args(["dictionary", "terms", "remove", "CAFÉ"])
        .assert()
        .success()
        .stdout("Removed the term 'CAFÉ'; 1 term left.\n");
    cli(tmp.path())
        .args(["dictionary", "terms", "remove", "nope"])
        .assert()
        .success()
        .stdout("There is no term 'nope'; 1 term.\n");
    let replaced = json_out(cli(tmp.path()).args([
        "--json",
        "dictionary",
        "terms",
        "replace",
        "Zürich",
        "Oslo",
    ]));
    assert_eq!(replaced["terms"], serde_json::json!(["Oslo", "Zürich"]));
    assert_eq!(replaced["count"], 2);
    cli(tmp.path())
        .args(["dictionary", "terms", "list"])
        .assert()
        .success()
        .stdout("Oslo\nZürich\n2 terms in all.\n");

    cli(tmp.path())
        .args(["dictionary", "corrections", "set", "teh", "the"])
        .assert()
        .success();
    cli(tmp.path())
        .args(["dictionary", "corrections", "set", "Colour", "color", "--case-sensitive"])
        .assert()
        .success()
        .stdout(
            "ORIGINAL  REPLACEMENT  CASE-SENSITIVE\nColour    color        yes\nteh       the          no\n",
        );
    cli(tmp.path())
        .args(["dictionary", "corrections", "set", "", "x"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 400 - 'original' must not be empty\n");
    cli(tmp.path())
        .args(["dictionary", "corrections", "remove", "COLOUR"])
        .assert()
        .success()
        .stdout("Removed the correction for 'COLOUR'; 1 correction left.\n");
    let listed = json_out(cli(tmp.path()).args(["dictionary", "corrections", "--json"]));
    assert_eq!(
        listed,
        serde_json::json!({"corrections": [{"caseSensitive": false, "original": "teh", "replacement": "the"}], "count": 1})
    );
}

#[test]
fn rules_are_listed_and_toggled() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    cli(tmp.path())
        .arg("rules")
        .assert()
        .success()
        .stdout("No rules.\n");
    let backup = tmp.path().join("backup.json");
    std::fs::write(&backup, sample_backup(0).to_string()).unwrap();
    cli(tmp.path())
        .arg("import")
        .arg(&backup)
        .assert()
        .success();
    cli(tmp.path())
        .args(["rules", "list"])
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with("ID  ")
                .and(predicate::str::contains("Mail"))
                .and(predicate::str::contains("org.mozilla.Thunderbird"))
                .and(predicate::str::contains("multiple de, en"))
                .and(predicate::str::contains("exact fr -> en")),
        );
    let id = "0F8FAD5B-D9CB-469F-A165-70867728950E";
    cli(tmp.path())
        .args(["rules", "toggle", &id.to_lowercase()])
        .assert()
        .success()
        .stdout("Rule 'Mail' is now disabled.\n");
    let toggled = json_out(cli(tmp.path()).args(["rules", "toggle", id, "--json"]));
    assert_eq!(toggled["is_enabled"], true);
    assert_eq!(toggled["profile_name"], "Mail");
    let rules = json_out(cli(tmp.path()).args(["rules", "--json"]));
    assert_eq!(rules["rules"], rules["profiles"]);
    cli(tmp.path())
        .args(["rules", "toggle", "7C9E6679-7425-40DE-944B-000000000000"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 404 - Rule not found\n");
    // What people have at a terminal: a rule's name, or the start of its id.
    cli(tmp.path())
        .args(["rules", "toggle", "mail"])
        .assert()
        .success()
        .stdout("Rule 'Mail' is now disabled.\n");
    cli(tmp.path())
        .args(["rules", "toggle", "0f8fad5b"])
        .assert()
        .success()
        .stdout("Rule 'Mail' is now enabled.\n");
    cli(tmp.path())
        .args(["rules", "toggle", "Calendar"])
        .assert()
        .code(1)
        .stderr("Error: No rule has the id or name 'Calendar'. `verbatim rules` shows them.\n");
}

#[test]
fn export_writes_the_server_document_owner_only_with_a_receipt() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("in.json"), sample_backup(4).to_string()).unwrap();
    cli(tmp.path())
        .current_dir(work.path())
        .args(["import", "in.json"])
        .assert()
        .success();

    cli(tmp.path())
        .current_dir(work.path())
        .args(["export", "out.json"])
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with(format!(
                "Exported settings to {}",
                work.path().join("out.json").display()
            ))
            .and(predicate::str::contains(
                "2 workflows, 3 dictionary entries, 1 snippets",
            )),
        );
    let path = work.path().join("out.json");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["schemaVersion"], 1);
    assert_eq!(written["history"].as_array().unwrap().len(), 4);
    assert_eq!(
        others(work.path(), &["in.json", "out.json"]),
        Vec::<String>::new()
    );

    let receipt =
        json_out(
            cli(tmp.path())
                .current_dir(work.path())
                .args(["--json", "export", "again.json"]),
        );
    let again = work.path().join("again.json");
    assert_eq!(receipt["path"], again.display().to_string());
    assert_eq!(receipt["bytes"], std::fs::metadata(&again).unwrap().len());
    assert_eq!(
        receipt["counts"],
        serde_json::json!({
            "workflows": 2, "dictionaryEntries": 3, "snippets": 1, "promptActions": 1,
            "profiles": 1, "hotkeys": 2, "plugins": 0, "history": 4, "updateChannel": 1,
            // The imported backup's retention window would have shortened this server's.
            "preferences": 0
        })
    );
}

#[test]
fn a_failed_export_leaves_no_file_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(tmp.path(), &["--require-token"]);
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("backup.json");
    std::fs::write(&target, "previous backup").unwrap();

    // The server refuses: the existing file is untouched and nothing else appears.
    cli(tmp.path())
        .args(["export", target.to_str().unwrap(), "--api-token", "wrong"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 401 - Missing or invalid API token\n");
    // Nothing answers.
    cli(tmp.path())
        .args([
            "export",
            target.to_str().unwrap(),
            "--port",
            &closed_port().to_string(),
        ])
        .assert()
        .code(2);
    // The target is a folder, or its folder does not exist.
    std::fs::create_dir(work.path().join("folder")).unwrap();
    cli(tmp.path())
        .current_dir(work.path())
        .args(["export", "folder"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("it is a folder"));
    cli(tmp.path())
        .current_dir(work.path())
        .args(["export", "missing/backup.json"])
        .assert()
        .code(1);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous backup");
    assert_eq!(
        others(work.path(), &["backup.json", "folder"]),
        Vec::<String>::new()
    );
    assert_eq!(
        others(&work.path().join("folder"), &[]),
        Vec::<String>::new()
    );

    // A folder the exporting user cannot write to.
    let locked = work.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let mut export = common::verbatim(tmp.path());
    export.args([
        "export",
        locked.join("backup.json").to_str().unwrap(),
        "--port",
        &server.discovery.port.to_string(),
        "--api-token",
        &server.discovery.token,
    ]);
    if unsafe { libc::geteuid() } == 0 {
        // root writes anywhere: export as an unprivileged user instead, who may enter the
        // folders but not write to them.
        for folder in [work.path(), &locked] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::os::unix::process::CommandExt::uid(&mut export, 65534);
        export.env("HOME", "/");
    } else {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    Command::from_std(export)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nothing was written"));
    assert_eq!(others(&locked, &[]), Vec::<String>::new());
}

#[test]
fn import_takes_relative_absolute_and_home_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("backups")).unwrap();
    std::fs::write(
        home.path().join("backups/settings.json"),
        sample_backup(3).to_string(),
    )
    .unwrap();

    cli(tmp.path())
        .env("HOME", home.path())
        .args(["import", "~/backups/settings.json"])
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with(format!(
                "Imported {}:\n",
                home.path().join("backups/settings.json").display()
            ))
            .and(predicate::str::contains("  workflows       2 imported\n"))
            .and(predicate::str::contains("  history         3 imported, 0 outside the retention window\n"))
            .and(predicate::str::contains("  plugins         0 installed, 2 skipped (the plugin registry could not be reached)\n")),
        );
    // The same file again, by a relative path: everything is skipped.
    let summary = json_out(
        cli(tmp.path())
            .current_dir(home.path().join("backups"))
            .args(["import", "settings.json", "--json"]),
    );
    assert_eq!(summary["workflowsImported"], 0);
    assert_eq!(summary["dictionarySkipped"], 3);
    assert_eq!(summary["historyImported"], 0);
    // By an absolute path.
    cli(tmp.path())
        .arg("import")
        .arg(home.path().join("backups/settings.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "dictionary      0 imported, 3 skipped",
        ));

    cli(tmp.path())
        .env("HOME", home.path())
        .args(["import", "~/backups/missing.json"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("missing.json").and(predicate::str::contains("No such file")),
        );
    std::fs::write(
        home.path().join("bad.json"),
        r#"{"schemaVersion":1,"workflows":[{"id":"x"}]}"#,
    )
    .unwrap();
    cli(tmp.path())
        .env("HOME", home.path())
        .args(["import", "~/bad.json"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 400 - The document is not a valid Verbatim settings backup. workflows[0].id: expected a UUID.\n");
}

/// What a backup brings that the API does not list: snippets, profiles and prompt actions are
/// listed and deleted in the data folder.
#[test]
fn snippets_profiles_and_prompt_actions_from_a_backup_are_listed_and_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    let backup = tmp.path().join("settings.json");
    std::fs::write(&backup, sample_backup(0).to_string()).unwrap();
    cli(tmp.path())
        .arg("import")
        .arg(&backup)
        .assert()
        .success();

    cli(tmp.path()).arg("snippets").assert().success().stdout(
        predicate::str::is_match(r"(?m)^my address +on +1 Rue de la Paix, Paris$").unwrap(),
    );
    let profiles = json_out(cli(tmp.path()).args(["profiles", "--json"]));
    assert_eq!(profiles["profiles"][0]["name"], "Terminal", "{profiles}");
    let actions = json_out(cli(tmp.path()).args(["prompt-actions", "list", "--json"]));
    assert_eq!(
        actions["prompt_actions"][0]["name"], "Summarise",
        "{actions}"
    );

    cli(tmp.path())
        .args(["snippets", "delete", "MY ADDRESS"])
        .assert()
        .success()
        .stdout("Deleted the snippet MY ADDRESS\n");
    cli(tmp.path())
        .arg("snippets")
        .assert()
        .success()
        .stdout("No snippets.\n");
    cli(tmp.path())
        .args(["profiles", "delete", "886313e1-3b8a-5372-9b90-0c9aee199e5d"])
        .assert()
        .success();
    cli(tmp.path())
        .arg("profiles")
        .assert()
        .success()
        .stdout("No profiles.\n");
    cli(tmp.path())
        .args([
            "prompt-actions",
            "delete",
            "16FD2706-8BAF-433B-82EB-8C7FADA847DA",
        ])
        .assert()
        .success();
    cli(tmp.path())
        .arg("prompt-actions")
        .assert()
        .success()
        .stdout("No prompt actions.\n");

    // Deleting what is not there, or by a malformed id, is an error that says so.
    cli(tmp.path())
        .args(["snippets", "delete", "my address"])
        .assert()
        .code(1)
        .stderr("Error: No snippet my address\n");
    cli(tmp.path())
        .args(["profiles", "delete", "terminal"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("'terminal' is not an id (a UUID"));
}
