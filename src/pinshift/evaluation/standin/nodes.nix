# Symbolic values of pinshift's stand-in nixpkgs: one kind, the node.
#
# A node stands for whatever the real nixpkgs has at an attribute path (`python313Packages.torch`). It is at
# once a package set (every name of `universe` is a child node: the names the evaluated files select), a
# package (`override`, `overrideAttrs`, `overridePythonAttrs` record what they were given, in order), a
# scope (`overrideScope`, `.override { overrides = …; }`, an interpreter's `packageOverrides`, overlays at
# the root: applied as nixpkgs applies them, fixed point, final/prev), a function (a call is recorded:
# `fetchFromGitHub { … }`, `stdenv.mkDerivation { … }`) and a string (`"${node}"` is `«path»`).
#
# Every attribute this file writes into a node is told apart from what a recipe wrote by its position
# (`builtins.unsafeGetAttrPos`: this file): a summary shows only what the recipe set.
{ universe, lib, roots, importer, nodesFile }:
let
  b = builtins;

  isSymbol = v: b.isAttrs v && v ? __pinshift;
  pathText = path: b.concatStringsSep "." path;
  symbolText = path: "«${pathText path}»";
  names = list: b.listToAttrs (b.map (n: { name = n; value = true; }) list);

  # attributes of a derivation whose symbolic value is a list or a string, so that `old.buildInputs ++ [ … ]`
  # and `(old.preConfigure or "") + ''…''` work on the stand-in as on the real thing
  listAttrs = names [
    "buildInputs" "nativeBuildInputs" "propagatedBuildInputs" "propagatedNativeBuildInputs" "checkInputs"
    "nativeCheckInputs" "installCheckInputs" "nativeInstallCheckInputs" "dependencies" "build-system"
    "patches" "cmakeFlags" "configureFlags" "mesonFlags" "makeFlags" "ninjaFlags" "buildFlags" "installFlags"
    "pytestFlagsArray" "pytestFlags" "disabledTests" "disabledTestPaths" "pythonImportsCheck" "outputs"
    "requiredSystemFeatures" "disallowedReferences" "allowedReferences" "hardeningDisable" "hardeningEnable"
    "setupPyBuildFlags" "pipInstallFlags" "pythonRelaxDeps" "pythonRemoveDeps" "platforms" "badPlatforms"
    "maintainers" "cudaCapabilities" "gpuTargets" "extraPackages" "postFixupHooks" "depsBuildBuild"
    "propagatedUserEnvPkgs" "strictDeps"
  ];
  stringAttrs = names [
    "pname" "version" "name" "description" "longDescription" "homepage" "mainProgram" "changelog"
    "preConfigure" "postConfigure" "configurePhase" "preBuild" "postBuild" "buildPhase" "preInstall"
    "postInstall" "installPhase" "preFixup" "postFixup" "fixupPhase" "prePatch" "postPatch" "patchPhase"
    "preCheck" "postCheck" "checkPhase" "preInstallCheck" "postInstallCheck" "installCheckPhase" "preDist"
    "postDist" "shellHook" "setupHook" "unpackPhase" "preUnpack" "postUnpack" "sourceRoot" "format"
    "pyproject" "NIX_CFLAGS_COMPILE" "NIX_LDFLAGS" "TORCH_CUDA_ARCH_LIST" "CMAKE_CUDA_ARCHITECTURES"
    "cudaVersion" "pythonVersion" "system" "outPath" "drvPath" "rev" "tag" "hash" "sha256" "url" "owner"
    "repo"
  ];
  interpreter = path: b.length path == 1 && b.match "(python|pypy)[0-9]*" (b.head path) != null;
  packageSet = n: b.match "(python|pypy)[0-9]*Packages" n != null;

  # the same attribute set every node has: a value per universe name
  over = make: b.listToAttrs (b.map (n: { name = n; value = make n; }) universe);

  # `lib` of a root: the stand-in's functions, and the records nixpkgs types (lists, strings, sets), so that
  # `platforms.linux ++ platforms.darwin`, `"${maintainer.email}"` and `teams.cuda.members ++ [ … ]` work
  libOf = symbol:
    let
      record = group: fields: symbol [ "lib" group ] // over (n: symbol [ "lib" group n ] // fields n);
      text = group: n: field: symbolText [ "lib" group n field ];
    in
    symbol [ "lib" ] // lib // {
      licenses = record "licenses" (n: {
        shortName = text "licenses" n "shortName"; spdxId = text "licenses" n "spdxId";
        fullName = text "licenses" n "fullName"; url = text "licenses" n "url";
        free = b.match "unfree.*" n == null; redistributable = b.match "unfree.*" n == null; deprecated = false;
      });
      maintainers = record "maintainers" (n: {
        name = text "maintainers" n "name"; email = text "maintainers" n "email";
        github = text "maintainers" n "github"; matrix = text "maintainers" n "matrix";
      });
      teams = record "teams" (n: {
        members = [ (symbol [ "lib" "teams" n "members" ]) ]; scope = text "teams" n "scope";
        shortName = text "teams" n "shortName";
      });
      systems = symbol [ "lib" "systems" ] // { doubles = lib.platforms; flakeExposed = lib.platforms.linux ++ lib.platforms.darwin; };
    };

  # a list attribute is a one-element list whose element stands for every item (`item`): `filter` and `map`
  # over it record what was done (listOps), so `filter (d: …)` and `map (d: if … then custom else d)` differ
  typed = symbol: path: n:
    if listAttrs ? ${n} then [ (symbol (path ++ [ n ])).__pinshift.asItem ]
    else if stringAttrs ? ${n} then symbolText (path ++ [ n ])
    else symbol (path ++ [ n ]);

  platform = {
    system = "x86_64-linux"; config = "x86_64-unknown-linux-gnu"; isLinux = true; isDarwin = false;
    isx86_64 = true; isx86 = true; isAarch64 = false; isAarch = false; isAarch32 = false; isi686 = false;
    isWindows = false; isMusl = false; isStatic = false; isPower64 = false; isRiscV = false; is64bit = true;
  };

  defaults = {
    path = [ ];
    pin = null;
    history = [ ];  # [ { override = args; } | { overrideAttrs = attrs; } | { call = argument; } ... ] in order
    sealed = 0;  # the first `sealed` history entries were made inside the package set (overlays, scopes)
    explicit = { };  # the derivation attributes the history set, merged
    args = { };  # the `.override` arguments, merged
    exts = [ ];  # extensions of this node as a scope (overlays at the root)
    pkgsExts = [ ];  # an interpreter's packageOverrides
    setResults = [ ];  # what the extensions of the scope this node was selected from set
    root = null;  # the root node (the package set a recipe imported); null: this node is a root
    config = { };  # the root's config
    given = null;  # the root's config as the recipe gave it (the pin's record)
    item = false;  # it stands for every item of a symbolic list
    ops = [ ];  # what `filter`/`map` did to those items, in order ("filter", "map")
  };

  node = a0:
    let
      a = defaults // a0;
      isRoot = a.path == [ ] && a.root == null;
      rootNode = if isRoot then self else a.root;
      pin = if isRoot && a.pin != null then a.pin // { config = a.given; results = folded.results; } else a.pin;
      symbol = path: node { inherit path pin; root = rootNode; };

      childOf = n:
        if isRoot && packageSet n then
          let interp = b.substring 0 (b.stringLength n - 8) n; in (if self ? ${interp} then self.${interp} else symbol [ interp ]).pkgs
        # a package's list and string attributes have those types (`pkg.propagatedBuildInputs`, `stdenv.cc.version`,
        # `meta.platforms`), as `old.…` has in overrideAttrs; the root's children are packages and sets
        else if !isRoot && (listAttrs ? ${n} || stringAttrs ? ${n}) then typed symbol a.path n
        else node { path = a.path ++ [ n ]; inherit pin; root = rootNode; setResults = if isRoot then [ ] else folded.results; };
      base = over childOf;

      # the derivation attributes as `overrideAttrs` shows them: the recipe's own, else symbolic
      current = over (typed symbol a.path) // a.explicit;
      finalAttrs = current // { finalPackage = self; };

      with' = changes: node (a // changes);
      record = kind: given: with' {
        history = a.history ++ [ { ${kind} = given; } ];
        explicit = a.explicit // given;
      };
      attrsOverride = kind: f:
        let
          first = if lib.isFunction f then f current else f;
          given = if b.isFunction first then f result.__pinshift.finalAttrs current else first;
          result = record kind given;
        in result;
      extensions = arg: if b.isFunction arg then [ arg ] else [ ];

      methods = {
        override = arg:
          let given = if b.isFunction arg then arg (symbol (a.path ++ [ "(arguments)" ]) // a.args) else arg; in
          with' {
            history = a.history ++ [ { override = given; } ];
            args = a.args // given;
            exts = a.exts ++ extensions (given.overrides or null);
            pkgsExts = a.pkgsExts ++ extensions (given.packageOverrides or null);
          };
        overrideAttrs = attrsOverride "overrideAttrs";
        overridePythonAttrs = attrsOverride "overridePythonAttrs";
        overrideDerivation = attrsOverride "overrideDerivation";
        overrideScope = f: with' { exts = a.exts ++ [ f ]; };
        overrideScope' = f: with' { exts = a.exts ++ [ f ]; };
        extend = f: with' { exts = a.exts ++ [ f ]; };
        appendOverlays = list: with' { exts = a.exts ++ list; };
        callPackage = fn: args:
          let f = if b.isFunction fn then fn else importer fn; in
          if b.isFunction f then f (b.intersectAttrs (b.functionArgs f) (rootNode // self) // args) else f;
        __functor = me: arg:
          let
            last = lib.last ([ "" ] ++ a.path);
            lazy = b.match "(mk|build).*" last != null;
            given =
              if last == "withPackages" && b.isFunction arg then arg self.pkgs
              else if b.isFunction arg then (if lazy then arg result.__pinshift.finalAttrs else "«function»")
              else arg;
            result = with' {
              history = a.history ++ [ { call = given; } ];
              explicit = a.explicit // (if b.isAttrs given && !(isSymbol given) then given else { });
            };
          in result;
        out = self;
        outPath = textOf a;
        type = "derivation";
      };

      # a fetcher's result keeps what it was given, as nixpkgs' passthru does (`"${cutlass-src.rev}"`)
      called = a.history != [ ] && (lib.last a.history) ? call && b.isAttrs (lib.last a.history).call;
      visible = {
        inherit (current) pname version name src meta passthru;
      } // (if called then { inherit (current) rev tag owner repo url hash sha256; } else { })
        // (if interpreter a.path then {
        pkgs = node {
          path = [ "${b.head a.path}Packages" ]; inherit pin; root = rootNode;
          exts = (rootNode.pythonPackagesExtensions or [ ]) ++ a.pkgsExts;
        };
      } else { });

      rootDefaults = if !isRoot then { } else {
        lib = libOf symbol;
        config = a.config;
        pkgs = self;
        pythonPackagesExtensions = [ ];
        system = "x86_64-linux";
        stdenv = symbol [ "stdenv" ] // platform // {
          hostPlatform = symbol [ "stdenv" "hostPlatform" ] // platform;
          buildPlatform = symbol [ "stdenv" "buildPlatform" ] // platform;
          targetPlatform = symbol [ "stdenv" "targetPlatform" ] // platform;
        };
        stdenvNoCC = self.stdenv;
      };

      start = base // rootDefaults // visible // methods;
      # extensions as nixpkgs applies them: prev is the set before, final the fixed point (this node)
      folded = b.foldl'
        (acc: ext:
          let r = ext self acc.prev; in { prev = acc.prev // r; changed = acc.changed // r; results = acc.results ++ [ r ]; })
        { prev = start; changed = { }; results = [ ]; }
        (a.exts ++ (if isRoot && b.isFunction (a.config.packageOverrides or null) then [ (final: prev: a.config.packageOverrides prev) ] else [ ]));
      sealed = b.mapAttrs (n: v: if isSymbol v then v.__pinshift.reseal folded.results else v) folded.changed;

      info = {
        kind = "node";
        inherit (a) path history explicit args setResults;
        inherit pin finalAttrs current;
        reseal = setResults: with' { sealed = b.length a.history; inherit setResults; };
        inherit (a) item ops;
        label = labelOf a;
        asItem = with' { item = true; };
        withOp = op: with' { ops = a.ops ++ [ op ]; };
        compact = let value = compactOf a; in b.deepSeq value value;
        summary = summaryOf a pin current;
      };

      self = start // sealed // { __pinshift = info; };
    in
    self;

  # --- summaries: plain JSON values ---------------------------------------------------------------------

  standinAttribute = set: n:
    let position = b.unsafeGetAttrPos n set; in position != null && position.file == nodesFile;

  showPath = p:
    let
      text = toString p;
      root = lib.findFirst (r: lib.hasPrefix "${r}/" text) null roots;
    in
    if root == null then text else "./${lib.removePrefix "${root}/" text}";

  show = depth: deep: v:
    let t = b.typeOf v; in
    if depth > 40 then "«…»"
    else if t == "set" then (if v ? __pinshift then showSymbol depth deep v else b.mapAttrs (n: show (depth + 1) (deep && n != "passthru")) v)
    else if t == "list" then b.map (show (depth + 1) deep) v
    else if t == "lambda" then "«function»"
    else if t == "path" then showPath v
    else v;

  showSymbol = depth: deep: v:
    let
      own = if deep then v.__pinshift.compact else "«${v.__pinshift.label}»";
      extras = b.filter (n: n != "__pinshift" && !(standinAttribute v n)) (b.attrNames v);
    in
    if extras == [ ] then own
    else { "//" = own; } // b.listToAttrs (b.map (n: { name = n; value = show (depth + 1) deep v.${n}; }) extras);

  showAttrs = set: b.mapAttrs (n: show 1 (n != "passthru")) set;

  entry = e:
    let kind = b.head (b.attrNames e); value = e.${kind}; in
    { ${kind} = if b.isAttrs value && !(isSymbol value) then b.attrNames value else show 1 true value; };

  compactOf = a:
    if a.history == [ ] then "«${labelOf a}»"
    else if b.length a.history == 1 && (b.head a.history) ? call then { ${pathText a.path} = show 1 true (b.head a.history).call; }
    else showAttrs a.explicit // (if a.args == { } then { } else { override = show 1 true a.args; }) // {
      package = pathText a.path;
      overrides = b.map entry a.history;
    };

  showPin = pin:
    if pin == null then null
    else {
      inherit (pin) rev source hash;
      config = if pin ? config then show 1 false pin.config else null;
      overlays = if pin ? results then b.map (show 1 true) pin.results else null;
    };

  summaryOf = a: pin: current:
    showAttrs (a.explicit // { inherit (current) pname version src; }) // {
      nixpkgs = showPin pin;
      package = pathText a.path;
      package_set = b.map (show 1 true) a.setResults;
      override = show 1 true a.args;
      overrides = b.map entry (lib.drop a.sealed a.history);
    };

  # a symbolic value's name: its path, then what `filter`/`map` did to it (`«….propagatedBuildInputs | map»`)
  labelOf = a: pathText a.path + b.concatStringsSep "" (b.map (op: " | ${op}") a.ops);

  # what a symbolic value is as a string (`"${cutlass-src}"`): its name, and what its calls and overrides were
  # given, so that a string keeps them (`«fetchFromGitHub { owner = "NVIDIA"; … rev = "v3.1.0"; }»`); a long one
  # by a digest of them
  # (`passthru` and `meta` left out: they are not part of a derivation, and may name the package itself)
  textOf = a:
    let
      one = b.length a.history == 1 && (b.head a.history) ? call;
      call = (b.head a.history).call;
      outside = v: if b.isAttrs v && !(isSymbol v) then b.removeAttrs v [ "passthru" "meta" ] else v;
      given =
        if a.history == [ ] then null
        else nixText (if one then show 1 true (outside call) else compactOf (a // { explicit = outside a.explicit; }));
    in
    if given == null then "«${labelOf a}»"
    else if b.stringLength given <= 300 then "«${labelOf a} ${given}»"
    else "«${labelOf a} #${b.substring 0 12 (b.hashString "sha256" given)}»";

  # a shown value (plain JSON values) as Nix writes it; symbolic strings as they are
  nixText = v:
    if b.isString v then (if lib.hasPrefix "«" v then v else b.toJSON v)
    else if b.isList v then "[ ${b.concatStringsSep " " (b.map nixText v)} ]"
    else if b.isAttrs v then "{ ${b.concatStringsSep "" (b.map (n: "${n} = ${nixText v.${n}}; ") (firstNames (b.attrNames v)))}}"
    else b.toJSON v;

  # what says most about a fetched source first, as pinshift.evaluation.build_changes.nix_like writes it
  firstNames = names:
    let first = [ "owner" "repo" "rev" "tag" "url" "version" "package" ]; in
    b.filter (n: b.elem n names) first ++ b.filter (n: !(b.elem n first)) names;

  # `filter` and `map` for a list that may hold a symbolic list's item: the item keeps what was done to it
  isItem = v: isSymbol v && v.__pinshift.item;
  listOps = {
    filter = f: list: b.concatMap (e:
      if isItem e then let kept = f e; in [ (e.__pinshift.withOp (if isSymbol kept || kept then "filter" else "filter (none kept)")) ]
      else if f e then [ e ] else [ ]) list;
    map = f: b.map (e:
      if isItem e then let r = f e; in if sameItem r e then e.__pinshift.withOp "map" else r
      else f e);
    concatMap = f: b.concatMap (e:
      if isItem e then let r = f e; in if b.isList r && b.length r == 1 && sameItem (b.head r) e then [ (e.__pinshift.withOp "map") ] else r
      else f e);
  };
  # the item itself, as a function given it returned it (`d: … else d`)
  sameItem = r: e: isItem r && r.__pinshift.path == e.__pinshift.path && r.__pinshift.ops == e.__pinshift.ops
    && r.__pinshift.history == e.__pinshift.history;

  # a typed symbolic set: `config` of a caller's nixpkgs (`config.cudaCapabilities` is a list)
  typedSet = path: pin: over (typed (p: node { path = p; inherit pin; }) path);
in
{
  inherit node isSymbol show typedSet platform libOf listOps;
  root = { pin, config, given ? null, overlays ? [ ] }: node { inherit pin config given; exts = overlays; };
  symbol = path: node { inherit path; };
  summarise = value: if isSymbol value then value.__pinshift.summary else { value = show 0 true value; };
}
