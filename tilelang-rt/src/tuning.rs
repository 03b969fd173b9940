//! The tuning cache shared by the tuner ([`crate::tune`], which times a kernel's configs and
//! records the fastest) and the generated `launch_auto` (which launches the recorded config when
//! there is one): a tab-separated text file, one line per (kernel, arch, shape bucket).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a cache entry is for: a kernel, an arch and a shape bucket.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub kernel: String,
    pub arch: String,
    pub bucket: String,
}

impl Key {
    pub fn new(kernel: &str, arch: &str, shape: &[usize]) -> Key {
        Key {
            kernel: clean(kernel),
            arch: clean(arch),
            bucket: bucket(shape),
        }
    }
}

/// Tabs and newlines would break the file's lines.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// The shape bucket: every dimension rounded up to a power of two, joined with `x`
/// (`[4000, 16384]` → `"4096x16384"`; a scalar shape `[]` → `"-"`).
pub fn bucket(shape: &[usize]) -> String {
    if shape.is_empty() {
        return "-".to_string();
    }
    shape
        .iter()
        .map(|&d| {
            d.max(1)
                .checked_next_power_of_two()
                .unwrap_or(d)
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("x")
}

/// `TILELANG_TUNE_CACHE`, else the user's cache directory, else `target/`.
pub fn default_cache_path() -> PathBuf {
    if let Some(p) = std::env::var_os("TILELANG_TUNE_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let home_cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        });
    match home_cache {
        Some(dir) => dir.join("tilelang").join("tune.tsv"),
        None => PathBuf::from("target").join("tilelang-tune.tsv"),
    }
}

const HEADER: &str = "# tilelang tune cache v1: kernel\tarch\tbucket\tconfig\tmedian_ms";

/// The cache's entries; a missing or unreadable file is an empty cache, malformed lines are
/// skipped.
pub fn read_cache(path: &Path) -> BTreeMap<Key, (String, f64)> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if let [kernel, arch, bucket, config, ms] = f[..] {
            let Ok(ms) = ms.parse::<f64>() else { continue };
            out.insert(
                Key {
                    kernel: kernel.to_string(),
                    arch: arch.to_string(),
                    bucket: bucket.to_string(),
                },
                (config.to_string(), ms),
            );
        }
    }
    out
}

/// Adds or replaces one entry, rewriting the file through a temporary file and a rename.
pub fn write_entry(path: &Path, key: &Key, config: &str, ms: f64) -> std::io::Result<()> {
    let mut entries = read_cache(path);
    entries.insert(key.clone(), (clean(config), ms));
    let mut text = String::from(HEADER);
    text.push('\n');
    for (k, (c, ms)) in &entries {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            k.kernel, k.arch, k.bucket, c, ms
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The config recorded for `kernel` on `arch` at `shape`'s bucket in the cache at
/// [`default_cache_path`], if any. The parsed file is kept per process and read again when it
/// changes (its modification time), so a launch pays a `stat` of the file, not a parse.
pub fn tuned(kernel: &str, arch: &str, shape: &[usize]) -> Option<String> {
    type Parsed = (
        PathBuf,
        Option<std::time::SystemTime>,
        BTreeMap<Key, (String, f64)>,
    );
    static CACHE: Mutex<Option<Parsed>> = Mutex::new(None);
    let path = default_cache_path();
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let fresh = matches!(&*cache, Some((p, m, _)) if *p == path && *m == modified);
    if !fresh {
        *cache = Some((path.clone(), modified, read_cache(&path)));
    }
    let entries = &cache.as_ref()?.2;
    entries
        .get(&Key::new(kernel, arch, shape))
        .map(|(config, _)| config.clone())
}
