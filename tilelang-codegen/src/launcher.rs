//! The typed, safe launcher generated for each kernel: a function with the kernel's name that
//! uses the device's default config, and a module of the same name with the configs as a type
//! (`Config`, one variant per config, carrying its const values), an explicit
//! `launch(dev, Config::X, ..)`, `launch_auto` (the first config whose conditions hold), the
//! string form `launch_named` for type-erased callers, and the checks every launch runs before
//! any work starts.

use crate::emit_cpu::{self, ExprEmitter};
use crate::ir::*;
use crate::target::Target;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The `Config` variant of a config: its name in UpperCamelCase (`t128x64` is `T128x64`,
/// `small_tile` is `SmallTile`, `r#type` is `Type`); validation makes them unique.
pub fn variant_name(config: &str) -> String {
    let name = config.strip_prefix("r#").unwrap_or(config);
    let mut out = String::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.extend(c.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    match out.as_str() {
        // Keywords and names the generated `impl Config` uses itself.
        "" | "Self" => format!("C{out}"),
        _ => out,
    }
}

/// The methods of the generated `Config`, which a const generic's accessor must not shadow.
const CONFIG_METHODS: &[&str] = &["name", "values", "from_name", "default_for", "ALL"];

/// The parameters of the public launch functions: `a: &Tensor<f16>, scale: f32`.
pub fn public_params(k: &Kernel) -> Vec<TokenStream> {
    k.params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tensor { dtype, mutable, .. } => {
                public_param(&p.name, Some(*mutable), *dtype)
            }
            ParamKind::Scalar { dtype } => public_param(&p.name, None, *dtype),
        })
        .collect()
}

/// The same, from the parsed (not validated) kernel, for the fallback launcher.
pub fn fallback_params(def: &crate::ast::KernelDef) -> Vec<TokenStream> {
    def.params
        .iter()
        .map(|p| match &p.kind {
            crate::ast::ParamKind::Tensor { dtype, mutable, .. } => {
                public_param(&p.name, Some(*mutable), *dtype)
            }
            crate::ast::ParamKind::Scalar { dtype } => public_param(&p.name, None, *dtype),
        })
        .collect()
}

/// `tensor`: `Some(mutable)` for a tensor parameter, `None` for a scalar.
fn public_param(name: &syn::Ident, tensor: Option<bool>, dtype: Dtype) -> TokenStream {
    let t = emit_cpu::ty(dtype);
    match tensor {
        Some(true) => quote!(#name: &mut ::tilelang::Tensor<#t>),
        Some(false) => quote!(#name: &::tilelang::Tensor<#t>),
        None if dtype == Dtype::Index => quote!(#name: usize),
        None => quote!(#name: #t),
    }
}

/// One lowered (target, config): what the launcher needs to embed and call its object.
pub struct Lowered {
    pub target: Target,
    pub config: usize,
    pub launch: crate::lower::Launch,
}

/// Lowers every config for every target, as the build script did: the same (pure) emitter,
/// so the same entry, threads and shared memory. A config over a target's limits (shared
/// memory, registers) is left out for that target when another config of the kernel fits it
/// (the build script warns, and a launch of it there is `Error::ConfigNotCompiled`, naming
/// the configs that target has); an error when no config fits a target, when `defaults` names a
/// config left out for its arch, or for anything else the lowering refuses. Nothing is left
/// out silently.
pub fn lower(k: &Kernel, targets: &[Target]) -> Result<Vec<Lowered>, Vec<crate::ctxt::Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for t in targets {
        let mut over = Vec::new();
        let before = out.len();
        for c in 0..k.configs.len() {
            match crate::lower::launch(k, c, t) {
                Ok(launch) => out.push(Lowered {
                    target: *t,
                    config: c,
                    launch,
                }),
                Err(d) if d.over_limits => over.push((c, d)),
                Err(d) => errors.push(d),
            }
        }
        if out.len() == before {
            // No config fits this target: each one's reason is an error.
            errors.extend(over.into_iter().map(|(_, d)| d));
            continue;
        }
        for (arch, c) in &k.defaults {
            if let Some((_, d)) = over.iter().find(|(o, _)| o == c && arch == t.arch) {
                errors.push(crate::ctxt::Diagnostic {
                    message: format!(
                        "`defaults` names `{}` for {arch}, which is left out there: {}",
                        k.configs[*c].name, d.message
                    ),
                    hint: Some(format!(
                        "name a config that fits {arch} (compiled there: {}), or remove the entry",
                        compiled_on(k, &out[before..])
                    )),
                    ..d.clone()
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The configs lowered for one target, as `a, b`.
fn compiled_on(k: &Kernel, lowered: &[Lowered]) -> String {
    let names: Vec<String> = lowered
        .iter()
        .map(|l| format!("`{}`", k.configs[l.config].name))
        .collect();
    names.join(", ")
}

/// The objects the build script compiled for this kernel: one per (target, config), embedded
/// from `OUT_DIR` under the names `tilelang_build` gives them.
fn objects(k: &Kernel, lowered: &[Lowered]) -> Vec<TokenStream> {
    lowered
        .iter()
        .map(|l| {
            let (arch, config, entry, threads, shared) = (
                l.target.arch,
                k.configs[l.config].name.to_string(),
                &l.launch.entry,
                l.launch.threads,
                l.launch.shared_bytes as u32,
            );
            let file = format!(
                "/{}/{}",
                crate::names::OBJECT_DIR,
                crate::names::object_name(entry, arch)
            );
            let image = quote!(::core::include_bytes!(
                ::core::concat!(::core::env!("OUT_DIR"), #file)
            ));
            let tma = match &l.launch.tma {
                Some(t) => {
                    let (tma_entry, tma_threads, tma_shared) =
                        (&t.entry, t.threads, t.shared_bytes as u32);
                    let maps = t.maps.iter().map(|m| tma_map(k, l.config, m));
                    let persistent = t.persistent;
                    quote! {
                        ::core::option::Option::Some(&::tilelang::__private::tma::Tma {
                            object: ::tilelang::__private::gpu::Object {
                                arch: #arch,
                                config: #config,
                                entry: #tma_entry,
                                threads: #tma_threads,
                                shared_bytes: #tma_shared,
                                image: #image,
                                tma: ::core::option::Option::None,
                            },
                            maps: &[#(#maps),*],
                            persistent: #persistent,
                        })
                    }
                }
                None => quote!(::core::option::Option::None),
            };
            quote! {
                ::tilelang::__private::gpu::Object {
                    arch: #arch,
                    config: #config,
                    entry: #entry,
                    threads: #threads,
                    shared_bytes: #shared,
                    image: #image,
                    tma: #tma,
                }
            }
        })
        .collect()
}

/// A tensor map of a TMA entry as the runtime reads it: the tensor's argument (tensors and
/// scalars come first, in parameter order, then the shape symbols), its dimensions from the
/// shape arguments or this config's constants, its element type, box and swizzle.
fn tma_map(k: &Kernel, config: usize, m: &crate::lower::TmaMap) -> TokenStream {
    let ParamKind::Tensor { dims, dtype, .. } = &k.params[m.param].kind else {
        unreachable!("TMA maps describe tensors")
    };
    let vals = &k.configs[config].values;
    let dims = dims.iter().map(|d| match d {
        DimRef::Sym(i) => {
            let i = k.params.len() + i;
            quote!(::tilelang::__private::tma::TmaDim::Arg(#i))
        }
        DimRef::Const(c) => {
            let v = vals[*c];
            quote!(::tilelang::__private::tma::TmaDim::Const(#v))
        }
    });
    let elem = match dtype {
        Dtype::F16 => quote!(::tilelang::__private::tma::TmaElem::F16),
        Dtype::Bf16 => quote!(::tilelang::__private::tma::TmaElem::Bf16),
        Dtype::U8 => quote!(::tilelang::__private::tma::TmaElem::U8),
        other => unreachable!("the TMA pass maps f16, bf16 and u8 tensors, not {other:?}"),
    };
    let (arg, boxes, swizzle) = (m.param, &m.boxes, m.swizzle);
    quote! {
        ::tilelang::__private::tma::TmaMap {
            arg: #arg,
            dims: &[#(#dims),*],
            elem: #elem,
            boxes: &[#(#boxes),*],
            swizzle: #swizzle,
        }
    }
}

pub fn emit(k: &Kernel, lowered: &[Lowered]) -> TokenStream {
    let name = &k.name;
    let name_str = name.to_string();
    let vis = &k.vis;
    let attrs = &k.attrs;
    let params = public_params(k);
    let args: Vec<_> = k.params.iter().map(|p| &p.name).collect();
    let consts = &k.consts;
    let config_names: Vec<String> = k.configs.iter().map(|c| c.name.to_string()).collect();
    let defaults = k.defaults.iter().map(|(arch, c)| {
        let c = k.configs[*c].name.to_string();
        quote!((#arch, #c))
    });
    let variants: Vec<syn::Ident> = k
        .configs
        .iter()
        .map(|c| format_ident!("{}", variant_name(&c.name.to_string())))
        .collect();
    let variant_docs = k.configs.iter().map(|c| {
        let vals: Vec<String> = k
            .consts
            .iter()
            .zip(&c.values)
            .map(|(q, v)| format!("{q} = {v}"))
            .collect();
        format!(
            "Config `{}`: {}.",
            c.name,
            if vals.is_empty() {
                "no const generics".to_string()
            } else {
                vals.join(", ")
            }
        )
    });
    let nconfigs = k.configs.len();
    let nsymbols = k.symbols.len();
    // The shape symbols' values as the tensors give them (the first dimension each names; 0
    // where a tensor has too few dimensions, which the launch then refuses), for the tuning
    // cache's key.
    let symbol_values: Vec<TokenStream> = (0..k.symbols.len())
        .map(|s| {
            k.params
                .iter()
                .find_map(|p| match &p.kind {
                    ParamKind::Tensor { dims, .. } => dims
                        .iter()
                        .position(|d| matches!(d, DimRef::Sym(x) if *x == s))
                        .map(|d| {
                            let n = &p.name;
                            quote!(#n.shape().get(#d).copied().unwrap_or(0))
                        }),
                    ParamKind::Scalar { .. } => None,
                })
                .unwrap_or_else(|| quote!(0usize))
        })
        .collect();
    let arms = k.configs.iter().zip(&variants).map(|(c, v)| {
        let n = c.name.to_string();
        let vals = c.values.iter().map(|v| *v as usize);
        quote!(Config::#v => __launch::<#(#vals),*>(__dev, #n, #(#args),*))
    });
    let name_arms = k.configs.iter().zip(&variants).map(|(c, v)| {
        let n = c.name.to_string();
        quote!(Config::#v => #n)
    });
    let index_arms = variants
        .iter()
        .enumerate()
        .map(|(i, v)| quote!(Config::#v => #i));
    let accessors = k
        .consts
        .iter()
        .enumerate()
        .filter(|(_, q)| !CONFIG_METHODS.contains(&q.to_string().as_str()))
        .map(|(i, q)| {
            let doc = format!("`{q}` in this config.");
            let arms = k.configs.iter().zip(&variants).map(|(c, v)| {
                let val = c.values[i] as usize;
                quote!(Config::#v => #val)
            });
            quote! {
                #[doc = #doc]
                pub const fn #q(self) -> usize {
                    match self { #(#arms),* }
                }
            }
        });
    let config_infos = k.configs.iter().map(|c| {
        let n = c.name.to_string();
        let vals = k.consts.iter().zip(&c.values).map(|(q, v)| {
            let (q, v) = (q.to_string(), *v as usize);
            quote!((#q, #v))
        });
        quote!(::tilelang::ConfigInfo { name: #n, values: &[#(#vals),*] })
    });
    let symbols: Vec<String> = k.symbols.iter().map(|s| s.to_string()).collect();
    let nparams = k.params.len();
    let unpack = k.params.iter().map(|p| {
        let (n, ns) = (&p.name, p.name.to_string());
        match &p.kind {
            ParamKind::Tensor {
                dtype,
                mutable: true,
                ..
            } => {
                let t = emit_cpu::ty(*dtype);
                quote!(let #n = __args.output::<#t>(#ns)?;)
            }
            ParamKind::Tensor { dtype, .. } => {
                let t = emit_cpu::ty(*dtype);
                quote!(let #n = __args.input::<#t>(#ns)?;)
            }
            ParamKind::Scalar { dtype } => {
                let t = if *dtype == Dtype::Index {
                    quote!(usize)
                } else {
                    emit_cpu::ty(*dtype)
                };
                quote!(let #n = __args.scalar::<#t>(#ns)?;)
            }
        }
    });
    // `#[cfg]` on the kernel applies to the module too.
    let cfgs: Vec<_> = k
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let e = ExprEmitter { k };

    // Shape binding, per tensor.
    let mut bind = Vec::new();
    let mut ranges = Vec::new();
    let mut views = Vec::new();
    let mut cpu_args = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        let pname = &p.name;
        let pstr = pname.to_string();
        match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
            } => {
                let specs = dims.iter().map(|d| match d {
                    DimRef::Sym(s) => quote!(::tilelang::__private::launch::DimSpec::Sym(#s)),
                    DimRef::Const(c) => {
                        let cn = &k.consts[*c];
                        let cs = cn.to_string();
                        quote!(::tilelang::__private::launch::DimSpec::Const(#cs, #cn))
                    }
                });
                bind.push(quote!(__binder.tensor(__dev, #pstr, &*#pname, &[#(#specs),*])?;));
                ranges.push(quote!(::tilelang::__private::launch::ArgRange { name: #pstr, range: #pname.address_range(), written: #mutable }));
                let (t, r, id) = (
                    emit_cpu::ty(*dtype),
                    dims.len(),
                    emit_cpu::tensor_ident(k, i),
                );
                if *mutable {
                    views.push(quote! {
                        let __shape = #pname.shape().to_vec();
                        let #id = ::tilelang::__private::cpu::Out::<#t, #r>::new(__KERNEL, #pstr, #pname.host_mut()?, &__shape);
                    });
                } else {
                    views.push(quote!(let #id = ::tilelang::__private::cpu::In::<#t, #r>::new(__KERNEL, #pstr, #pname.host()?, #pname.shape());));
                }
                cpu_args.push(quote!(#id));
            }
            ParamKind::Scalar { dtype } => {
                let id = emit_cpu::scalar_ident(k, i);
                if *dtype == Dtype::Index {
                    bind.push(quote!(let #id: i64 = #pname as i64;));
                } else {
                    bind.push(quote!(let #id = #pname;));
                }
                cpu_args.push(quote!(#id));
            }
        }
    }
    let sym_lets = (0..k.symbols.len()).map(|i| {
        let s = emit_cpu::sym_ident(k, i);
        quote!(let #s: i64 = __binder.value(#i);)
    });
    let sym_vals = (0..k.symbols.len()).map(|i| emit_cpu::sym_ident(k, i));
    let const_desc = k.consts.iter().map(|c| {
        let s = format!(", {c} = {{}}");
        quote!(__desc.push_str(&format!(#s, #c));)
    });
    let const_desc = quote!(#(#const_desc)*);
    let requires = k.requires.iter().map(|(cond, text)| {
        let c = e.expr(cond);
        quote! {
            if !(#c) {
                let mut __desc = __binder.describe();
                #const_desc
                return ::core::result::Result::Err(::tilelang::Error::Requirement {
                    kernel: __KERNEL, config: __config, condition: #text, values: __desc,
                });
            }
        }
    });
    let mut grid: Vec<TokenStream> = k.grid.iter().map(|g| e.expr(g)).collect();
    while grid.len() < 3 {
        grid.push(quote!(1i64));
    }
    let cpu_fn = emit_cpu::cpu_fn(k);
    let objects = objects(k, lowered);
    let nobjects = objects.len();
    let gpu_args: Vec<TokenStream> = k
        .params
        .iter()
        .map(|p| {
            let n = &p.name;
            let ga = quote!(::tilelang::__private::gpu::KernelArg);
            match &p.kind {
                ParamKind::Tensor { .. } => quote!(#ga::Ptr(#n.device_ptr())),
                ParamKind::Scalar { dtype } => match dtype {
                    Dtype::F16 => quote!(#ga::F16(#n)),
                    Dtype::Bf16 => quote!(#ga::Bf16(#n)),
                    Dtype::F32 => quote!(#ga::F32(#n)),
                    Dtype::F64 => quote!(#ga::F64(#n)),
                    Dtype::I32 => quote!(#ga::I32(#n)),
                    Dtype::U32 => quote!(#ga::U32(#n)),
                    Dtype::U8 => quote!(#ga::U8(#n)),
                    _ => quote!(#ga::I64(#n as i64)),
                },
            }
        })
        .chain((0..k.symbols.len()).map(|i| {
            let s = emit_cpu::sym_ident(k, i);
            quote!(::tilelang::__private::gpu::KernelArg::I64(#s))
        }))
        .collect();
    let mod_doc =
        format!("Configs, defaults and the explicit launcher of the `{name_str}` kernel.");
    let fn_doc = format!(
        "\n\nLaunches `{name_str}` with the default config for the device's arch (configs: {}). \
         Shapes, devices and aliasing are checked first; a failed check returns an error and \
         leaves every tensor untouched.",
        config_names.join(", ")
    );

    quote! {
        #(#attrs)*
        #[doc = #fn_doc]
        // One parameter per tensor and scalar of the kernel, however many it has.
        #[allow(clippy::too_many_arguments)]
        #vis fn #name(__dev: &::tilelang::Device, #(#params),*) -> ::core::result::Result<(), ::tilelang::Error> {
            #name::launch(__dev, #name::Config::default_for(__dev.arch()), #(#args),*)
        }

        #(#cfgs)*
        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::all)]
        #vis mod #name {
            const __KERNEL: &str = #name_str;
            // One static, so that the embedded images exist once in the binary however many
            // copies of the consts below are made (a const's value is copied at every use).
            static __OBJECTS: [::tilelang::__private::gpu::Object; #nobjects] = [#(#objects),*];
            /// The kernel's metadata (name, configs with their const values, defaults, symbols,
            /// objects) and type-erased launcher, as one value; the consts below are its fields.
            pub const KERNEL: ::tilelang::KernelInfo = ::tilelang::KernelInfo {
                name: #name_str,
                configs: &[#(#config_infos),*],
                config_names: &[#(#config_names),*],
                defaults: &[#(#defaults),*],
                symbols: &[#(#symbols),*],
                objects: &__OBJECTS,
                launch_dyn,
            };
            /// The kernel's name.
            pub const NAME: &str = KERNEL.name;
            /// The names of the compiled configs; the first is the default where `DEFAULTS` names none.
            pub const CONFIGS: &[&str] = KERNEL.config_names;
            /// The default config per target arch.
            pub const DEFAULTS: &[(&str, &str)] = KERNEL.defaults;
            /// The shape symbols bound at launch.
            pub const SYMBOLS: &[&str] = KERNEL.symbols;
            /// The device code objects compiled ahead of time by the crate's build script.
            pub const OBJECTS: &[::tilelang::__private::gpu::Object] = KERNEL.objects;

            /// The config a launch on `arch` uses by default.
            pub fn default_config(arch: &str) -> &'static str {
                KERNEL.default_config(arch)
            }

            /// The kernel's configs, one variant each, in the attribute's order.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub enum Config {
                #(#[doc = #variant_docs] #variants,)*
            }

            impl Config {
                /// Every config, in the attribute's order.
                pub const ALL: [Config; #nconfigs] = [#(Config::#variants),*];

                /// The config's name in the attribute.
                pub const fn name(self) -> &'static str {
                    match self { #(#name_arms),* }
                }

                /// `(const generic, value)` of this config, in the kernel's const-generic order.
                pub const fn values(self) -> &'static [(&'static str, usize)] {
                    KERNEL.configs[match self { #(#index_arms),* }].values
                }

                #(#accessors)*

                /// The config named `name`; an unknown name is [`::tilelang::Error::UnknownConfig`],
                /// which lists the configs and suggests the nearest.
                pub fn from_name(name: &str) -> ::core::result::Result<Config, ::tilelang::Error> {
                    <Config as ::tilelang::KernelConfig>::from_name(name)
                }

                /// The config a launch on `arch` uses by default (`defaults = [..]`, else the first).
                pub fn default_for(arch: &str) -> Config {
                    <Config as ::tilelang::KernelConfig>::default_for(arch)
                }
            }

            impl ::tilelang::KernelConfig for Config {
                const KERNEL: &'static ::tilelang::KernelInfo = &KERNEL;
                const ALL: &'static [Config] = &Config::ALL;
                fn name(self) -> &'static str {
                    Config::name(self)
                }
            }

            impl ::core::fmt::Display for Config {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(self.name())
                }
            }

            /// Launches with an explicit config.
            pub fn launch(__dev: &::tilelang::Device, config: Config, #(#params),*) -> ::core::result::Result<(), ::tilelang::Error> {
                match config {
                    #(#arms,)*
                }
            }

            /// Launches with the config named `config` (one of [`CONFIGS`]): the string form, for
            /// code that handles kernels by name; an unknown name is an error that suggests the
            /// nearest.
            pub fn launch_named(__dev: &::tilelang::Device, config: &str, #(#params),*) -> ::core::result::Result<(), ::tilelang::Error> {
                self::launch(__dev, Config::from_name(config)?, #(#args),*)
            }

            /// Launches with the first config whose conditions hold for these arguments (its
            /// `requires`, the tensor dimensions given by its const generics, the device's
            /// per-block limits): the one the tuning cache ([`::tilelang::tuning`]) records
            /// for this kernel, arch and the shape symbols' bucket first, if any, then the device
            /// arch's default, then the others in the attribute's order. Returns the config used; when none holds,
            /// [`::tilelang::Error::NoConfigFits`] with each config's reason. Any other error
            /// (shapes, dtypes, aliasing, the driver) is returned at once.
            pub fn launch_auto(__dev: &::tilelang::Device, #(#params),*) -> ::core::result::Result<Config, ::tilelang::Error> {
                let __shape: [usize; #nsymbols] = [#(#symbol_values),*];
                ::tilelang::__private::launch::launch_auto(__dev.arch(), &__shape, |__c| {
                    self::launch(__dev, __c, #(#args),*)
                })
            }

            /// Launches with type-erased arguments, in parameter order; each tensor's dtype and
            /// each argument's kind are checked at run time ([`::tilelang::Error::DtypeMismatch`],
            /// [`::tilelang::Error::BadArgument`]).
            pub fn launch_dyn(__dev: &::tilelang::Device, config: &str, args: ::std::vec::Vec<::tilelang::Arg<'_>>) -> ::core::result::Result<(), ::tilelang::Error> {
                let mut __args = ::tilelang::__private::dynamic::Args::new(__KERNEL, args, #nparams)?;
                #(#unpack)*
                self::launch_named(__dev, config, #(#args),*)
            }

            #[allow(unused_variables, unused_mut, unused_parens, non_snake_case)]
            fn __launch<#(const #consts: usize),*>(__dev: &::tilelang::Device, __config: &'static str, #(#params),*) -> ::core::result::Result<(), ::tilelang::Error> {
                let mut __binder = ::tilelang::__private::launch::Binder::new(__KERNEL, SYMBOLS);
                #(#bind)*
                #(#sym_lets)*
                #(#requires)*
                ::tilelang::__private::launch::check_aliasing(__KERNEL, &[#(#ranges),*])?;
                let __grid = ::tilelang::__private::launch::check_grid(__KERNEL, [#(#grid),*])?;
                match __dev.backend() {
                    ::tilelang::Backend::Cpu => {
                        #(#views)*
                        __cpu::<#(#consts),*>(#(#cpu_args,)* [#(#sym_vals),*], __grid)
                    }
                    _ => {
                        let __args = [#(#gpu_args),*];
                        // SAFETY: every tensor was checked above to live on `__dev`, with the
                        // rank and shape the kernel's symbols describe, and no output overlaps
                        // another argument; the arguments follow the order of the generated
                        // C++ signature (tensors and scalars, then shape symbols).
                        unsafe { __dev.launch_gpu(__KERNEL, __config, OBJECTS, __grid, &__args) }
                    }
                }
            }

            #cpu_fn
        }
    }
}

/// On errors: the public launcher with the same signature (when the parameters could be read)
/// so code calling the kernel still type-checks; it returns an error if ever called.
pub fn fallback(
    name: &syn::Ident,
    vis: &syn::Visibility,
    params: Option<Vec<TokenStream>>,
) -> TokenStream {
    let Some(params) = params else {
        return quote!();
    };
    let msg = format!("kernel `{name}` failed to compile");
    let modname = name.clone();
    let name_str = name.to_string();
    quote! {
        #[allow(unused_variables, clippy::too_many_arguments)]
        #vis fn #name(__dev: &::tilelang::Device, #(#params),*) -> ::core::result::Result<(), ::tilelang::Error> {
            ::core::result::Result::Err(::tilelang::Error::NoDevice(#msg.to_string()))
        }
        #[allow(non_snake_case)]
        #vis mod #modname {
            pub const KERNEL: ::tilelang::KernelInfo = ::tilelang::KernelInfo {
                name: #name_str,
                configs: &[],
                config_names: &[],
                defaults: &[],
                symbols: &[],
                objects: &[],
                launch_dyn: |_, _, _| ::core::result::Result::Err(::tilelang::Error::NoDevice(#msg.to_string())),
            };
            pub const CONFIGS: &[&str] = &[];
        }
    }
}
