# The `lib` of pinshift's stand-in nixpkgs: the functions recipes call, with nixpkgs' semantics,
# written from their documentation (nixpkgs' lib/ is not shipped). A name not defined here is still
# an attribute of the stand-in's lib: a symbolic function whose calls are recorded (nodes.nix).
#
# `isSymbol` tells a symbolic value (a node) from a real one: a condition the stand-in cannot know
# (the caller's `config.cudaSupport` in a Flox recipe) counts as true in the `optional…` family.
{ isSymbol, importer ? builtins.import, listOps ? { inherit (builtins) filter map concatMap; } }:
let
  b = builtins;
  truth = c: if isSymbol c then true else c;

  lists = rec {
    inherit (b) elem elemAt head tail length concatLists genList sort all any;
    inherit (listOps) filter map;  # a symbolic list's item records them (nodes.nix)
    foldl' = b.foldl';
    foldl = op: nul: list: b.foldl' op nul list;
    foldr = op: nul: list:
      let len = b.length list; go = n: if n == len then nul else op (b.elemAt list n) (go (n + 1)); in go 0;
    optional = cond: x: if truth cond then [ x ] else [ ];
    optionals = cond: xs: if truth cond then xs else [ ];
    toList = x: if b.isList x then x else [ x ];
    singleton = x: [ x ];
    inherit (listOps) concatMap;
    flatten = x: if b.isList x then b.concatLists (b.map flatten x) else [ x ];
    remove = e: filter (x: x != e);
    count = pred: b.foldl' (c: x: if pred x then c + 1 else c) 0;
    findFirst = pred: default: list: let found = b.filter pred list; in if found == [ ] then default else b.head found;
    last = list: b.elemAt list (b.length list - 1);
    init = list: b.genList (b.elemAt list) (b.length list - 1);
    take = count: list: b.genList (b.elemAt list) (if count < b.length list then count else b.length list);
    drop = count: list: let len = b.length list; in
      if count >= len then [ ] else b.genList (n: b.elemAt list (n + count)) (len - count);
    sublist = start: count: list: take count (drop start list);
    range = first: last: if first > last then [ ] else b.genList (n: first + n) (last - first + 1);
    reverseList = list: let len = b.length list; in b.genList (n: b.elemAt list (len - n - 1)) len;
    unique = b.foldl' (acc: e: if b.elem e acc then acc else acc ++ [ e ]) [ ];
    intersectLists = e: filter (x: b.elem x e);
    subtractLists = e: filter (x: !(b.elem x e));
    imap0 = f: list: b.genList (n: f n (b.elemAt list n)) (b.length list);
    imap1 = f: list: b.genList (n: f (n + 1) (b.elemAt list n)) (b.length list);
    zipListsWith = f: fst: snd: b.genList (n: f (b.elemAt fst n) (b.elemAt snd n))
      (if b.length fst < b.length snd then b.length fst else b.length snd);
    partition = pred: list: { right = filter pred list; wrong = filter (x: !(pred x)) list; };
    groupBy = pred: b.foldl' (r: e: let key = pred e; in r // { ${key} = (r.${key} or [ ]) ++ [ e ]; }) { };
    naturalSort = b.sort b.lessThan;
    intersperse = separator: list:
      if list == [ ] || b.length list == 1 then list
      else b.tail (concatMap (x: [ separator x ]) list);
    isList = b.isList;
  };

  strings = rec {
    inherit (b) concatStringsSep stringLength substring replaceStrings toString;
    concatStrings = b.concatStringsSep "";
    concatMapStrings = f: list: concatStrings (b.map f list);
    concatMapStringsSep = sep: f: list: b.concatStringsSep sep (b.map f list);
    concatImapStringsSep = sep: f: list: b.concatStringsSep sep (lists.imap1 f list);
    optionalString = cond: string: if truth cond then string else "";
    hasPrefix = pref: str: b.substring 0 (b.stringLength pref) str == pref;
    hasSuffix = suffix: content:
      let lenContent = b.stringLength content; lenSuffix = b.stringLength suffix; in
      lenContent >= lenSuffix && b.substring (lenContent - lenSuffix) lenContent content == suffix;
    hasInfix = infix: content: b.match ".*${escapeRegex infix}.*" "${content}" != null;
    removePrefix = prefix: str:
      if hasPrefix prefix str then b.substring (b.stringLength prefix) (b.stringLength str) str else str;
    removeSuffix = suffix: str:
      if hasSuffix suffix str then b.substring 0 (b.stringLength str - b.stringLength suffix) str else str;
    splitString = sep: s: b.filter b.isString (b.split (escapeRegex sep) (b.toString s));
    escapeRegex = b.replaceStrings
      [ "\\" "[" "]" "{" "}" "(" ")" "^" "$" "." "*" "+" "?" "|" ]
      [ "\\\\" "\\[" "\\]" "\\{" "\\}" "\\(" "\\)" "\\^" "\\$" "\\." "\\*" "\\+" "\\?" "\\|" ];
    toUpper = b.replaceStrings lowerChars upperChars;
    toLower = b.replaceStrings upperChars lowerChars;
    lowerChars = lists.map (n: b.substring n 1 "abcdefghijklmnopqrstuvwxyz") (lists.range 0 25);
    upperChars = lists.map (n: b.substring n 1 "ABCDEFGHIJKLMNOPQRSTUVWXYZ") (lists.range 0 25);
    stringToCharacters = s: b.genList (p: b.substring p 1 s) (b.stringLength s);
    escapeShellArg = arg: "'${b.replaceStrings [ "'" ] [ "'\\''" ] (b.toString arg)}'";
    escapeShellArgs = concatMapStringsSep " " escapeShellArg;
    versionOlder = v1: v2: b.compareVersions v2 v1 == 1;
    versionAtLeast = v1: v2: !(versionOlder v1 v2);
    fixedWidthString = width: filler: str:
      let strw = b.stringLength str; in
      if strw >= width then str else fixedWidthString width filler (filler + str);
    fixedWidthNumber = width: n: fixedWidthString width "0" (b.toString n);
    toInt = str: let n = b.fromJSON str; in if b.isInt n then n else b.throw "toInt: '${str}' is not an integer";
    trim = s: let m = b.match "[[:space:]]*(.*[^[:space:]])[[:space:]]*" s; in if m == null then "" else b.head m;
    makeSearchPath = subDir: paths: b.concatStringsSep ":" (b.map (p: "${p}/${subDir}") paths);
    makeSearchPathOutput = output: subDir: makeSearchPath subDir;
    makeLibraryPath = makeSearchPath "lib";
    makeBinPath = makeSearchPath "bin";
    makeIncludePath = makeSearchPath "include";
    enableFeature = flag: name: "--${if flag then "enable" else "disable"}-${name}";
    enableFeatureAs = flag: name: value: if flag then "--enable-${name}=${value}" else "--disable-${name}";
    withFeature = flag: name: "--${if flag then "with" else "without"}-${name}";
    withFeatureAs = flag: name: value: if flag then "--with-${name}=${value}" else "--without-${name}";
    cmakeOptionType = type: feature: value: "-D${feature}:${toUpper type}=${value}";
    cmakeBool = condition: flag: "-D${condition}:BOOL=${if truth flag then "TRUE" else "FALSE"}";
    cmakeFeature = feature: value: "-D${feature}=${value}";
    mesonOption = feature: value: "-D${feature}=${value}";
    mesonBool = condition: flag: "-D${condition}=${if truth flag then "true" else "false"}";
    mesonEnable = feature: flag: "-D${feature}=${if truth flag then "enabled" else "disabled"}";
    isString = b.isString;
    getName = x: x.pname or (b.parseDrvName x.name).name;
    getVersion = x: x.version or (b.parseDrvName x.name).version;
  };

  attrsets = rec {
    inherit (b) attrNames attrValues hasAttr getAttr listToAttrs mapAttrs removeAttrs intersectAttrs catAttrs;
    attrByPath = attrPath: default: set:
      if attrPath == [ ] then set
      else let name = b.head attrPath; in
        if set ? ${name} then attrByPath (b.tail attrPath) default set.${name} else default;
    hasAttrByPath = attrPath: set: attrByPath attrPath null set != null;
    getAttrFromPath = attrPath: set: attrByPath attrPath (b.throw "cannot find attribute '${b.concatStringsSep "." attrPath}'") set;
    setAttrByPath = attrPath: value:
      if attrPath == [ ] then value else { ${b.head attrPath} = setAttrByPath (b.tail attrPath) value; };
    nameValuePair = name: value: { inherit name value; };
    genAttrs = names: f: b.listToAttrs (b.map (n: nameValuePair n (f n)) names);
    filterAttrs = pred: set:
      b.listToAttrs (lists.concatMap (name: let v = set.${name}; in if pred name v then [ (nameValuePair name v) ] else [ ])
        (b.attrNames set));
    mapAttrs' = f: set: b.listToAttrs (b.map (attr: f attr set.${attr}) (b.attrNames set));
    mapAttrsToList = f: attrs: b.map (name: f name attrs.${name}) (b.attrNames attrs);
    concatMapAttrs = f: v: b.foldl' (a: x: a // x) { } (mapAttrsToList f v);
    optionalAttrs = cond: as: if truth cond then as else { };
    recursiveUpdateUntil = pred: lhs: rhs:
      let f = attrPath: b.zipAttrsWith (n: values:
        let here = attrPath ++ [ n ]; in
        if b.length values == 1 || pred here (b.elemAt values 1) (b.head values) then b.head values
        else f here values);
      in f [ ] [ rhs lhs ];
    recursiveUpdate = recursiveUpdateUntil (path: lhs: rhs: !(b.isAttrs lhs && b.isAttrs rhs));
    zipAttrsWith = b.zipAttrsWith;
    foldAttrs = op: nul: list_of_attrs:
      b.foldl' (a: n: b.foldl' (a: name: a // { ${name} = op n.${name} (a.${name} or nul); }) a (b.attrNames n))
        { } (lists.reverseList list_of_attrs);
    isDerivation = value: value.type or null == "derivation";
    getOutput = output: pkg: pkg.${output} or pkg.out or pkg;
    getBin = getOutput "bin";
    getLib = getOutput "lib";
    getDev = getOutput "dev";
    getMan = getOutput "man";
    getExe = x: "${getBin x}/bin/${x.meta.mainProgram or (strings.getName x)}";
    getExe' = x: y: "${getBin x}/bin/${y}";
    isAttrs = b.isAttrs;
  };

  trivial = rec {
    id = x: x;
    const = x: y: x;
    flip = f: a: b': f b' a;
    pipe = val: functions: b.foldl' (x: f: f x) val functions;
    concat = x: y: x ++ y;
    or = x: y: x || y;
    and = x: y: x && y;
    boolToString = c: if c then "true" else "false";
    mergeAttrs = x: y: x // y;
    min = x: y: if x < y then x else y;
    max = x: y: if x > y then x else y;
    mod = base: int: base - (int * (b.div base int));
    fix = f: let x = f x; in x;
    extends = f: rattrs: self: let super = rattrs self; in super // f self super;
    composeExtensions = f: g: final: prev: let fApplied = f final prev; prev' = prev // fApplied; in
      fApplied // g final prev';
    composeManyExtensions = lists.foldr (x: y: composeExtensions x y) (final: prev: { });
    warn = msg: x: x;
    warnIf = cond: msg: x: x;
    throwIf = cond: msg: x: if truth cond then b.throw msg else x;
    throwIfNot = cond: msg: x: if truth cond then x else b.throw msg;
    isFunction = f: b.isFunction f || (f ? __functor && isFunction (f.__functor f));
    functionArgs = f: if f ? __functor then f.__functionArgs or (functionArgs (f.__functor f)) else b.functionArgs f;
    setFunctionArgs = f: args: { __functor = self: f; __functionArgs = args; };
    isInt = b.isInt;
    isBool = b.isBool;
    inNixShell = false;
    version = "stand-in";
    importJSON = path: b.fromJSON (b.readFile path);
    importTOML = path: b.fromTOML (b.readFile path);
  };

  # `lib.platforms.*` are lists of systems, as nixpkgs' lib/systems/doubles.nix makes them (`linux ++ darwin`)
  platforms = let
    all = [
      "aarch64-linux" "armv5tel-linux" "armv6l-linux" "armv7a-linux" "armv7l-linux" "i686-linux" "loongarch64-linux"
      "m68k-linux" "microblaze-linux" "microblazeel-linux" "mips-linux" "mips64-linux" "mips64el-linux" "mipsel-linux"
      "powerpc-linux" "powerpc64-linux" "powerpc64le-linux" "riscv32-linux" "riscv64-linux" "s390-linux" "s390x-linux"
      "x86_64-linux" "aarch64-darwin" "x86_64-darwin" "i686-freebsd" "x86_64-freebsd" "aarch64-freebsd" "i686-netbsd"
      "x86_64-netbsd" "aarch64-netbsd" "i686-openbsd" "x86_64-openbsd" "x86_64-solaris" "i686-cygwin" "x86_64-cygwin"
      "i686-windows" "x86_64-windows" "aarch64-windows" "wasm32-wasi" "wasm64-wasi" "javascript-ghcjs" "aarch64-genode"
      "i686-genode" "x86_64-genode" "x86_64-redox" "aarch64-none" "arm-none" "avr-none" "i686-none" "x86_64-none"
      "riscv32-none" "riscv64-none" "powerpc-none" "msp430-none" "or1k-none" "m68k-none" "rx-none" "s390-none"
      "s390x-none" "vc4-none" "mmix-mmixware"
    ];
    by = pattern: b.filter (system: b.match pattern system != null) all;
  in {
    inherit all;
    none = [ ];
    linux = by ".*-linux"; darwin = by ".*-darwin"; freebsd = by ".*-freebsd"; netbsd = by ".*-netbsd";
    openbsd = by ".*-openbsd"; illumos = by ".*-solaris"; cygwin = by ".*-cygwin"; windows = by ".*-windows";
    wasi = by ".*-wasi"; genode = by ".*-genode"; redox = by ".*-redox"; ghcjs = by ".*-ghcjs"; embedded = by ".*-none";
    unix = by ".*-(linux|darwin|freebsd|netbsd|openbsd|solaris|cygwin|redox)"; gnu = by ".*-linux";
    x86_64 = by "x86_64-.*"; i686 = by "i686-.*"; x86 = by "(x86_64|i686)-.*"; aarch64 = by "aarch64-.*";
    arm = by "arm.*"; aarch = by "(aarch64|arm).*"; mips = by "mips.*"; mips64 = by "mips64.*"; riscv = by "riscv.*";
    riscv32 = by "riscv32-.*"; riscv64 = by "riscv64-.*"; power = by "powerpc.*"; s390 = by "s390.*";
    s390x = by "s390x-.*"; loongarch64 = by "loongarch64-.*"; m68k = by "m68k-.*"; microblaze = by "microblaze.*";
    wasm32 = by "wasm32-.*"; wasm64 = by "wasm64-.*"; js = by "javascript-.*"; or1k = by "or1k-.*"; avr = by "avr-.*";
    mmix = by "mmix-.*"; rx = by "rx-.*"; vc4 = by "vc4-.*"; littleEndian = by "(x86_64|i686|aarch64|arm|riscv|powerpc64le|mipsel|mips64el|loongarch64).*";
    bigEndian = by "(powerpc-|powerpc64-|mips-|mips64-|s390|m68k).*";
    mesaPlatforms = [ "i686-linux" "x86_64-linux" "x86_64-darwin" "armv5tel-linux" "armv6l-linux" "armv7l-linux"
      "armv7a-linux" "aarch64-linux" "powerpc64le-linux" "aarch64-darwin" "riscv64-linux" ];
  };

  versions = {
    splitVersion = b.splitVersion;
    major = v: b.elemAt (b.splitVersion v) 0;
    minor = v: b.elemAt (b.splitVersion v) 1;
    patch = v: b.elemAt (b.splitVersion v) 2;
    majorMinor = v: b.concatStringsSep "." (lists.take 2 (b.splitVersion v));
    pad = n: version: let numericVersion = b.head (b.splitVersion version); in version;
  };

  overridable = rec {
    makeOverridable = f: origArgs:
      let
        result = f origArgs;
        overrideWith = newArgs: origArgs // (if trivial.isFunction newArgs then newArgs origArgs else newArgs);
      in
      if b.isAttrs result then result // { override = newArgs: makeOverridable f (overrideWith newArgs); }
      else if b.isFunction result then { __functor = self: result; override = newArgs: makeOverridable f (overrideWith newArgs); }
      else result;
    callPackageWith = autoArgs: fn: args:
      let f = if trivial.isFunction fn then fn else importer fn; in
      makeOverridable f (b.intersectAttrs (trivial.functionArgs f) autoArgs // args);
  };
in
lists // strings // attrsets // trivial // overridable // {
  inherit lists strings attrsets trivial versions platforms;
  inherit (versions) splitVersion;
  inherit (b) compareVersions;
  fileset = { };
  sources = { cleanSource = src: src; cleanSourceWith = { src, ... }: src; sourceByRegex = src: regexes: src; };
  cleanSource = src: src;
  cleanSourceWith = { src, ... }: src;
  sourceByRegex = src: regexes: src;
}
