//! `cargo xtask report <ours.json> <peers.json> [--out docs/perf]`: merges the benches' JSON
//! (ours and the vendor baselines: cuBLAS, cuBLASLt, cuDNN, the copy ceiling) with the peers'
//! (PyTorch eager, `torch.compile` of it, Triton) into the performance table, printed as
//! markdown and written to `perf.md`, with a bar chart `perf.svg`. More than one peers file may
//! be given (the peers run in parts, e.g. `--impls torch_compile` on its own): their records
//! are merged.
//!
//! Rows are our kernels' variants per size set. A peer's record is matched to a row by chapter,
//! size set and variant name: an exact match (ignoring case and punctuation) wins, else a
//! variant whose words are all among the row's (or the other way round), so the peers' "gemm"
//! lines up with every GEMM step of chapter 08 and "softmax" with both softmax variants. Among
//! several records of one peer for the same variant, the fastest counts.
//!
//! A row can have several vendor baselines (cuBLAS and cuBLASLt for the GEMMs, cuDNN, the
//! driver's copy; rocBLAS / MIOpen on AMD; the peers' SDPA backends for attention, `sdpa_flash`
//! and `sdpa_cudnn`): the table's vendor column is the fastest of them
//! (by name), "vs vendor" compares with it, and under each table every vendor time is listed
//! where a row had more than one. The GEMM ceiling is the fastest vendor GEMM.

mod chart;
mod markdown;
mod parse;
mod table;

pub(crate) use markdown::{fmt_rate, ms, speedup, with_config};
pub(crate) use parse::{parse, Doc};
use std::path::Path;
pub(crate) use table::{merge, Row};

const USAGE: &str =
    "usage: cargo xtask report <ours.json> <peers.json> [more-peers.json ..] [--out docs/perf]";

/// The subcommand: reads the files (ours, then one or more of the peers', merged), prints the
/// markdown, writes `perf.md`, `perf.svg` and copies of the JSON files (the raw data beside the
/// table) into `out`.
pub fn report(args: &[String]) -> Result<(), String> {
    let mut files = Vec::new();
    let mut out = "docs/perf".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            out = it.next().ok_or("--out needs a directory")?.clone();
        } else {
            files.push(a.clone());
        }
    }
    let [ours_path, peers_paths @ ..] = &files[..] else {
        return Err(USAGE.into());
    };
    if peers_paths.is_empty() {
        return Err(USAGE.into());
    }
    let read = |p: &str| -> Result<Doc, String> {
        let src = std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?;
        parse(&src).map_err(|e| format!("{p}: {e}"))
    };
    let ours = read(ours_path)?;
    let mut peers = Doc::default();
    for p in peers_paths.iter().filter(|p| *p != "none") {
        peers.extend(read(p)?);
    }
    let table = merge(&ours, &peers);
    let md = table.markdown();
    print!("{md}");
    let out = Path::new(&out);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let write = |name: &str, data: &str| {
        std::fs::write(out.join(name), data)
            .map_err(|e| format!("{}: {e}", out.join(name).display()))
    };
    write("perf.md", &md)?;
    write("perf.svg", &table.svg())?;
    let mut copies = vec![(ours_path.clone(), "ours.json".to_string())];
    for (i, p) in peers_paths.iter().enumerate() {
        // The first peers file is `peers.json`; more keep their own names where they can.
        let own = Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let name = match own {
            _ if i == 0 => "peers.json".to_string(),
            Some(n) if n.ends_with(".json") && n != "ours.json" && n != "peers.json" => n,
            _ => format!("peers-{}.json", i + 1),
        };
        copies.push((p.clone(), name));
    }
    for (src, name) in &copies {
        let dest = out.join(name);
        // Copying a file onto itself would truncate it: compare the resolved paths.
        let same = std::fs::canonicalize(src)
            .ok()
            .is_some_and(|a| std::fs::canonicalize(&dest).is_ok_and(|b| a == b));
        if src != "none" && !same {
            std::fs::copy(src, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
    }
    eprintln!(
        "wrote {0}/perf.md, {0}/perf.svg and the JSON beside them",
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::table::Table;
    use super::*;

    const OURS: &str = r#"[
{"record":"header","impl":"tilelang","gpu":"NVIDIA H200","arch":"sm_90","driver":"580.1","date":"2026-12-01","commit":"abc"},
{"record":"result","chapter":"01","variant":"copy","impl":"tilelang","size_set":"large","shape":[268435456],"dtype":"f16","config":"b8192","config_role":"default","median_ms":0.30,"min_ms":0.29,"max_ms":0.31,"bytes":1073741824,"max_rel_err":0,"passed":true},
{"record":"result","chapter":"01","variant":"copy","impl":"tilelang","size_set":"large","shape":[268435456],"dtype":"f16","config":"b2048","config_role":"tuned","median_ms":0.25,"min_ms":0.24,"max_ms":0.26,"bytes":1073741824,"max_rel_err":0,"passed":true},
{"record":"result","chapter":"01","variant":"copy","impl":"cuda","size_set":"large","shape":[268435456],"dtype":"f16","config":"cuMemcpyDtoDAsync","config_role":"vendor","median_ms":0.26,"bytes":1073741824,"passed":true},
{"record":"result","chapter":"ceiling","variant":"d2d copy","impl":"cuda","size_set":"large","shape":[1073741824],"config":"cuMemcpyDtoDAsync","median_ms":1.0,"bytes":4.0e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm pipelined","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"t128x256x32s2","config_role":"default","median_ms":2.0,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm pipelined","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"t128x256x32s2","config_role":"tuned","same_as_default":true,"median_ms":2.0,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm naive","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"n16x16","config_role":"default","median_ms":100.0,"flops":1.1e12,"passed":false,"error":"mismatch"},
{"record":"result","chapter":"08","variant":"gemm","impl":"cublas","size_set":"large","shape":[8192,8192,8192],"config":"cublasGemmEx","config_role":"vendor","median_ms":1.6,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"06","variant":"softmax online","impl":"tilelang","size_set":"tutorial","shape":[4096,16384],"config":"r1x4096","config_role":"default","median_ms":0.1,"bytes":536870912,"passed":true},
{"record":"result","chapter":"04","variant":"fwd","impl":"tilelang","size_set":"tutorial","shape":[8192,4096],"config":"t16x512","config_role":"default","median_ms":0.05,"bytes":134225920,"passed":true},
{"record":"result","chapter":"launch","variant":"vector add N=1","impl":"tilelang","size_set":"tutorial","median_ms":0.0031,"us_per_launch":3.1,"passed":true}
]"#;

    /// The peers' file as JSON Lines with a header object, numeric chapters and other names.
    const PEERS: &str = r#"{"type":"header","torch":"2.9.0","triton":"3.5.0","gpu":"NVIDIA H200"}
{"chapter":1,"variant":"copy","impl":"torch","size_set":"large","shape":[268435456],"median_ms":0.5,"bytes":1073741824,"passed":true}
{"chapter":"01","variant":"copy","impl":"triton","size_set":"large","median_ms":0.4,"bytes":1073741824,"passed":true}
{"chapter":"08","variant":"gemm","impl":"pytorch","size_set":"large","median_ms":1.7,"flops":1.1e12,"passed":true}
{"chapter":"08","variant":"gemm","impl":"triton","size_set":"large","config":"a","median_ms":2.5,"flops":1.1e12,"passed":true}
{"chapter":"08","variant":"gemm","impl":"triton","size_set":"large","config":"b","median_ms":2.2,"flops":1.1e12,"passed":true}
{"chapter":"06","variant":"softmax","impl":"pytorch","size_set":"tutorial","median_ms":0.2,"bytes":536870912,"passed":true}
{"chapter":"06","variant":"softmax 3-pass","impl":"triton","size_set":"tutorial","median_ms":0.15,"bytes":536870912,"passed":true}
{"chapter":"06","variant":"softmax online","impl":"triton","size_set":"tutorial","median_ms":0.12,"bytes":536870912,"passed":true}
{"chapter":"04","variant":"forward","impl":"pytorch","size_set":"tutorial","median_ms":0.1,"bytes":134225920,"passed":true}
{"chapter":"04","variant":"backward","impl":"pytorch","size_set":"tutorial","median_ms":0.2,"bytes":134225920,"passed":true}
{"chapter":"04","variant":"fwd","impl":"pytorch","size_set":"large","median_ms":9.0,"passed":true}"#;

    fn table() -> Table {
        merge(&parse(OURS).unwrap(), &parse(PEERS).unwrap())
    }

    fn row<'a>(t: &'a Table, chapter: &str, variant: &str, size: &str) -> &'a Row {
        t.rows
            .iter()
            .find(|r| r.chapter == chapter && r.variant == variant && r.size_set == size)
            .unwrap_or_else(|| panic!("no row {chapter} {variant} {size}"))
    }

    #[test]
    fn parses_arrays_objects_and_json_lines() {
        let ours = parse(OURS).unwrap();
        assert_eq!(ours.header["gpu"], "NVIDIA H200");
        assert_eq!(ours.recs.len(), 11);
        let peers = parse(PEERS).unwrap();
        assert_eq!(peers.header["torch"], "2.9.0");
        assert_eq!(peers.recs[0].chapter, "01");
        assert_eq!(peers.recs[0].imp, "pytorch");
        let wrapped = parse(r#"{"header":{"gpu":"x"},"records":[{"chapter":"2","variant":"vector add","impl":"triton","size_set":"tutorial","median_ms":1}]}"#).unwrap();
        assert_eq!(wrapped.header["gpu"], "x");
        assert_eq!(wrapped.recs[0].chapter, "02");
        assert!(parse("not json").is_err());
    }

    #[test]
    fn merges_rows_with_peers_vendor_and_ceilings() {
        let t = table();
        // Rows: 01 copy, 04 fwd, 06 softmax online, 08 pipelined, 08 naive (launch is not a row).
        assert_eq!(t.rows.len(), 5);
        assert_eq!(t.launch_us, Some(3.1));
        assert_eq!(t.ceilings.bandwidth, Some(4.0e12 / 1e-3));
        assert!((t.ceilings.gemm.unwrap() - 1.1e12 / 1.6e-3).abs() < 1.0);

        let copy = row(&t, "01", "copy", "large");
        assert_eq!(copy.default.as_ref().unwrap().config, "b8192");
        assert_eq!(copy.tuned.as_ref().unwrap().config, "b2048");
        assert_eq!(copy.ours().unwrap().median_ms, Some(0.25));
        assert_eq!(copy.pytorch.as_ref().unwrap().median_ms, Some(0.5));
        assert_eq!(copy.triton.as_ref().unwrap().median_ms, Some(0.4));
        assert_eq!(copy.vendor().unwrap().imp, "cuda");
        assert_eq!(copy.vendors.len(), 1);

        // The peers' "gemm" serves every GEMM step; Triton's fastest config counts.
        let gemm = row(&t, "08", "gemm pipelined", "large");
        assert_eq!(gemm.triton.as_ref().unwrap().median_ms, Some(2.2));
        assert_eq!(gemm.vendor().unwrap().imp, "cublas");
        assert_eq!(t.gemm_ceiling_impl.as_deref(), Some("cublas"));
        assert!(row(&t, "08", "gemm naive", "large").pytorch.is_some());
        let pct = t.percent_of_ceiling(gemm).unwrap();
        assert!((pct - 80.0).abs() < 1e-9, "{pct}");

        // Exact names beat containment; "softmax" still fits "softmax online".
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.triton.as_ref().unwrap().variant, "softmax online");
        assert_eq!(sm.pytorch.as_ref().unwrap().variant, "softmax");
        // A peer's record of another problem size (other bytes) is not compared.
        let mut peers = parse(PEERS).unwrap();
        peers
            .recs
            .iter_mut()
            .filter(|r| r.chapter == "01")
            .for_each(|r| r.bytes = Some(1.0));
        let t2 = merge(&parse(OURS).unwrap(), &peers);
        assert!(row(&t2, "01", "copy", "large").pytorch.is_none());
        // Synonyms, and no match across size sets.
        let fwd = row(&t, "04", "fwd", "tutorial");
        assert_eq!(fwd.pytorch.as_ref().unwrap().median_ms, Some(0.1));
        assert!(fwd.triton.is_none() && fwd.vendors.is_empty() && fwd.vendor().is_none());
    }

    /// OURS with cuBLASLt (faster than cuBLAS), a faster vendor GEMM whose check failed, a
    /// cuDNN softmax and the libraries' versions in the header.
    fn several_vendors() -> Table {
        let ours = OURS
            .replace(
                r#""commit":"abc""#,
                r#""commit":"abc","cublas_version":130001,"cublaslt_version":130100,"cudnn_version":91300"#,
            )
            .replace(
                "\n]",
                r#",
{"record":"result","chapter":"08","variant":"gemm","impl":"cublaslt","size_set":"large","shape":[8192,8192,8192],"config":"cublasLtMatmul f16, f32 compute, heuristic algo id 21","config_role":"vendor","median_ms":1.5,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm","impl":"hipblaslt","size_set":"large","shape":[8192,8192,8192],"config":"x","config_role":"vendor","median_ms":1.0,"flops":1.1e12,"passed":false},
{"record":"result","chapter":"06","variant":"softmax","impl":"cudnn","size_set":"tutorial","shape":[4096,16384],"config":"cudnnSoftmaxForward ACCURATE","config_role":"vendor","median_ms":0.09,"bytes":536870912,"passed":true}
]"#,
            );
        merge(&parse(&ours).unwrap(), &parse(PEERS).unwrap())
    }

    #[test]
    fn the_fastest_passing_vendor_counts() {
        let t = several_vendors();
        let gemm = row(&t, "08", "gemm pipelined", "large");
        let imps: Vec<&str> = gemm.vendors.iter().map(|r| r.imp.as_str()).collect();
        assert_eq!(imps, ["cublas", "cublaslt", "hipblaslt"]);
        // hipBLASLt is faster but failed its check: cuBLASLt is the row's vendor and ceiling.
        assert_eq!(gemm.vendor().unwrap().imp, "cublaslt");
        assert!((t.ceilings.gemm.unwrap() - 1.1e12 / 1.5e-3).abs() < 1.0);
        assert_eq!(t.gemm_ceiling_impl.as_deref(), Some("cublaslt"));
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.vendor().unwrap().imp, "cudnn");
        assert_eq!(sm.vendors.len(), 1);
        // A row whose only vendor failed still shows it (with ✗), for lack of another.
        let failed_only = Row {
            vendors: vec![gemm.vendors[2].clone()],
            ..gemm.clone()
        };
        assert_eq!(failed_only.vendor().unwrap().imp, "hipblaslt");

        let md = t.markdown();
        assert!(
            md.contains("cuBLAS 130001, cuBLASLt 130100, cuDNN 91300"),
            "{md}"
        );
        assert!(md.contains("f16 GEMM 733 TFLOPS (cublaslt)"), "{md}");
        let line = md
            .lines()
            .find(|l| l.starts_with("| 08 | gemm pipelined |"))
            .unwrap();
        // Ours 2.0 ms against cuBLASLt's 1.5 ms.
        assert!(
            line.contains("1.500 (cublaslt)") && line.contains("0.75×"),
            "{line}"
        );
        let line = md
            .lines()
            .find(|l| l.starts_with("| 06 | softmax online |"))
            .unwrap();
        assert!(
            line.contains("0.0900 (cudnn)") && line.contains("0.90×"),
            "{line}"
        );
        // Every vendor time, once for the two GEMM rows that share them; none for rows with
        // one vendor.
        let listed: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(
            listed,
            ["- 08 gemm: cublaslt 1.500, cublas 1.600, hipblaslt 1.000 ✗"],
            "{md}"
        );
        // The chart draws the row's fastest vendor: still one bar per series at most.
        let svg = t.svg();
        assert!(svg.contains("08 gemm pipelined"));
    }

    #[test]
    fn markdown_and_svg() {
        let t = table();
        let md = t.markdown();
        assert!(md.contains("NVIDIA H200"), "{md}");
        assert!(
            md.contains("## Tutorial sizes") && md.contains("## Large sizes"),
            "{md}"
        );
        // 01 copy large: ours 0.25 ms; PyTorch 0.5 → 2.00×, Triton 0.4 → 1.60×, copy 0.26 → 1.04×.
        let line = md.lines().find(|l| l.starts_with("| 01 | copy |")).unwrap();
        assert!(
            line.contains("2.00×") && line.contains("1.60×") && line.contains("1.04×"),
            "{line}"
        );
        assert!(line.contains("4.29 TB/s"), "{line}");
        assert!(line.contains("0.2500 `b2048`"), "{line}");
        // 1 GiB / 0.25 ms = 4.29 TB/s of a 4000 TB/s ceiling.
        assert!(line.contains("| 0% |"), "{line}");
        let naive = md.lines().find(|l| l.contains("gemm naive")).unwrap();
        assert!(naive.contains("✗"), "{naive}");
        assert!(
            md.contains("Failed checks:** 08 gemm naive (large)"),
            "{md}"
        );
        assert!(md.contains("| tilelang | vector add N=1 | 3.10 |"), "{md}");

        let svg = t.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("08 gemm pipelined"));
        assert_eq!(
            svg.matches("<rect").count() - 1 - 6,
            svg.matches("% of the best").count()
        );
        // Every row here has a peer or vendor, so every row is drawn.
        assert_eq!(svg.matches(r#"text-anchor="end""#).count(), 5);
    }

    /// A second peers file (torch.compile run on its own): its records fill the torch.compile
    /// column and its ratio, a fall back from the requested mode is marked, and a compile that
    /// failed (a graph break) is listed under the tables.
    const COMPILED: &str = r#"[
{"record":"header","torch":"2.11.0","impls":["torch_compile"],"seed":"7"},
{"record":"kernel","chapter":"01","variant":"copy","impl":"torch_compile","size_set":"large","median_ms":0.3,"bytes":1073741824,"passed":true,"mode":"max-autotune-no-cudagraphs","mode_requested":"max-autotune-no-cudagraphs"},
{"record":"kernel","chapter":"06","variant":"softmax","impl":"torch_compile","size_set":"tutorial","median_ms":0.125,"bytes":536870912,"passed":true,"mode":"default","mode_requested":"max-autotune-no-cudagraphs","mode_error":"boom"},
{"record":"kernel","chapter":"04","variant":"bwd","impl":"torch_compile","size_set":"tutorial","median_ms":null,"bytes":201338880,"passed":false,"mode":null,"mode_requested":"max-autotune-no-cudagraphs","error":"torch.compile mode=max-autotune-no-cudagraphs: Unsupported: graph break | torch.compile mode=default: Unsupported: graph break"}
]"#;

    #[test]
    fn torch_compile_is_a_column_with_its_ratio() {
        let mut peers = parse(PEERS).unwrap();
        peers.extend(parse(COMPILED).unwrap());
        // The first file's header wins; the second only fills in.
        assert_eq!(peers.header["torch"], "2.9.0");
        assert_eq!(peers.header["seed"], "7");
        let t = merge(&parse(OURS).unwrap(), &peers);
        let copy = row(&t, "01", "copy", "large");
        assert_eq!(copy.torch_compile.as_ref().unwrap().median_ms, Some(0.3));
        assert_eq!(copy.pytorch.as_ref().unwrap().median_ms, Some(0.5));
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.torch_compile.as_ref().unwrap().mode, "default");
        assert!(row(&t, "08", "gemm pipelined", "large")
            .torch_compile
            .is_none());
        assert_eq!(t.compile_modes.len(), 2);
        assert_eq!(t.peer_failures.len(), 1);

        let md = t.markdown();
        assert!(
            md.contains("| PyTorch ms | torch.compile ms | Triton ms |")
                && md.contains("| vs PyTorch | vs torch.compile | vs Triton |"),
            "{md}"
        );
        // 01 copy large: ours 0.25 ms, torch.compile 0.3 ms → 1.20×, in its column (after
        // PyTorch's 2.00×, before Triton's 1.60×).
        let line = md.lines().find(|l| l.starts_with("| 01 | copy |")).unwrap();
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[5], "0.3000", "{line}");
        assert_eq!(&cells[12..15], ["2.00×", "1.20×", "1.60×"], "{line}");
        // 06: compiled in the default mode after the requested one failed: marked.
        let line = md
            .lines()
            .find(|l| l.starts_with("| 06 | softmax online |"))
            .unwrap();
        assert!(
            line.contains("0.1250 ↓") && line.contains("1.25×"),
            "{line}"
        );
        assert!(
            md.contains("`max-autotune-no-cudagraphs` (1 records)")
                && md.contains("`default` (1 records)"),
            "{md}"
        );
        assert!(
            md.contains("- 04 bwd torch_compile (tutorial): torch.compile mode=max-autotune"),
            "{md}"
        );
        // No row lacks a cell: every table line has the header's 15 columns.
        for l in md.lines().filter(|l| l.starts_with("| 0")) {
            assert_eq!(l.matches('|').count(), 16, "{l}");
        }
        let svg = t.svg();
        assert!(svg.contains("torch.compile"));
    }

    /// The examples' records (chapter `ex`) make rows of their own, matched with the peers'
    /// eager and torch.compile records of the same name and bytes.
    #[test]
    fn example_rows_meet_their_peers() {
        let ours = OURS.replace(
            "\n]",
            r#",
{"record":"result","chapter":"ex","title":"examples","variant":"rmsnorm","impl":"tilelang","size_set":"large","shape":[16384,8192],"config":"r1x1024","config_role":"default","median_ms":0.2,"bytes":536887296,"passed":true},
{"record":"result","chapter":"ex","title":"examples","variant":"layernorm","impl":"tilelang","size_set":"large","shape":[16384,8192],"config":"r1x1024","config_role":"default","median_ms":0.25,"bytes":536903680,"passed":true}
]"#,
        );
        let peers = r#"[
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"pytorch","size_set":"large","median_ms":0.4,"bytes":536887296,"passed":true},
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"pytorch","size_set":"large","median_ms":0.9,"bytes":536887296,"passed":true},
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"torch_compile","size_set":"large","median_ms":0.3,"bytes":536887296,"passed":true,"mode":"max-autotune-no-cudagraphs","mode_requested":"max-autotune-no-cudagraphs"},
{"record":"kernel","chapter":"ex","variant":"layernorm","impl":"torch_compile","size_set":"large","median_ms":0.5,"bytes":536903680,"passed":true}
]"#;
        let t = merge(&parse(&ours).unwrap(), &parse(peers).unwrap());
        let rms = row(&t, "ex", "rmsnorm", "large");
        // The fastest of the two eager records; nothing of layernorm's.
        assert_eq!(rms.pytorch.as_ref().unwrap().median_ms, Some(0.4));
        assert_eq!(rms.torch_compile.as_ref().unwrap().median_ms, Some(0.3));
        let ln = row(&t, "ex", "layernorm", "large");
        assert!(ln.pytorch.is_none());
        assert_eq!(ln.torch_compile.as_ref().unwrap().median_ms, Some(0.5));
        let md = t.markdown();
        assert!(
            md.contains("Rows `ex` are the `examples` crate's kernels"),
            "{md}"
        );
        let line = md
            .lines()
            .find(|l| l.starts_with("| ex | rmsnorm |"))
            .unwrap();
        assert!(line.contains("2.00×") && line.contains("1.50×"), "{line}");
        // After the chapters, in the large table.
        let large = md.find("## Large sizes").unwrap();
        assert!(md.find("| ex | rmsnorm |").unwrap() > large);
        assert!(md.find("| ex | rmsnorm |").unwrap() > md.find("| 08 | gemm pipelined |").unwrap());
    }

    /// Attention's peers: the two SDPA backends are vendor baselines by name (the faster one
    /// passed is the row's vendor, both are listed), each head size meets only its own records.
    #[test]
    fn attention_rows_meet_the_sdpa_backends() {
        let ours = OURS.replace(
            "\n]",
            r#",
{"record":"result","chapter":"ex","title":"examples","variant":"attention_d128","impl":"tilelang","size_set":"large","shape":[32,16384,128],"config":"d128","config_role":"default","median_ms":40.0,"flops":4.5e12,"passed":true},
{"record":"result","chapter":"ex","title":"examples","variant":"attention_d64","impl":"tilelang","size_set":"large","shape":[32,16384,64],"config":"d64","config_role":"default","median_ms":30.0,"flops":2.25e12,"passed":true}
]"#,
        );
        let peers = r#"[
{"record":"kernel","chapter":"ex","variant":"attention_d128","impl":"sdpa_flash","size_set":"large","median_ms":12.0,"flops":4.5e12,"passed":true},
{"record":"kernel","chapter":"ex","variant":"attention_d128","impl":"sdpa_cudnn","size_set":"large","median_ms":8.0,"flops":4.5e12,"passed":true},
{"record":"kernel","chapter":"ex","variant":"attention_d64","impl":"sdpa_flash","size_set":"large","median_ms":7.0,"flops":2.25e12,"passed":true},
{"record":"kernel","chapter":"ex","variant":"attention_d64","impl":"sdpa_cudnn","size_set":"large","median_ms":5.0,"flops":2.25e12,"passed":false},
{"record":"kernel","chapter":"ex","variant":"attention_d128","impl":"torch_compile","size_set":"large","median_ms":20.0,"flops":4.5e12,"passed":true}
]"#;
        let t = merge(&parse(&ours).unwrap(), &parse(peers).unwrap());
        let d128 = row(&t, "ex", "attention_d128", "large");
        assert_eq!(d128.vendor().unwrap().imp, "sdpa_cudnn");
        assert_eq!(d128.vendors.len(), 2);
        assert_eq!(d128.torch_compile.as_ref().unwrap().median_ms, Some(20.0));
        let d64 = row(&t, "ex", "attention_d64", "large");
        // cuDNN's check failed: the flash backend is the vendor.
        assert_eq!(d64.vendor().unwrap().imp, "sdpa_flash");
        assert!(d64.torch_compile.is_none());
        let md = t.markdown();
        assert!(md.contains("sdpa_cudnn"), "{md}");
    }
}
