# pinshift's stand-in nixpkgs: a recipe evaluated offline, its nixpkgs replaced by symbolic values.
#
#   (import ./. { universe = [ "python313Packages" "torch" … ]; roots = [ "/tmp/…/base" ]; })
#     .recipe /tmp/…/base ".flox/pkgs/x.nix"        -> the recipe's build summary (plain JSON values)
#
# Each recipe file is imported with `scopedImport`, and so is everything it imports: `import`,
# `fetchTarball`, `builtins.fetch*`, `<nixpkgs>` and `derivation` are the stand-in's. `import`ing a pinned
# nixpkgs (`fetchTarball`, `fetchFromGitHub`, `fetchGit` of nixpkgs, `<nixpkgs>`) gives the stand-in set,
# which records the pin (revision, hash), the config and what the overlays set; nothing is fetched. A file
# that is a function is called as Flox (callPackage) calls it, with the caller's stand-in set. Every file
# read is traced on stderr (`trace: ["read","/tmp/…/x.nix"]`) so that a summary can be remembered by the
# files it read (pinshift.evaluation.evaluation). Each trace starts with `secret`, chosen per run and given only
# on the command line, so that a recipe's own `builtins.trace` can never pass for one.
#
# The shadowing below is a model of nixpkgs, not a security boundary: Nix's restricted evaluation, its options
# and the operating system are (pinshift.sandbox.nix_process). It is still complete: the recipe's `builtins` is
# a set whose `builtins` is itself, every `__name` primop is the shadowed set's `name` (the list is read from
# `builtins.attrNames builtins`), `getEnv` is "" and `currentTime` 0.
{ universe, roots, secret ? "", unwritten ? { } }:
let
  b = builtins;
  lib = import ./lib.nix { isSymbol = nodes.isSymbol; inherit importer; inherit (nodes) listOps; };
  nodes = import ./nodes.nix { inherit universe lib roots importer; nodesFile = toString ./nodes.nix; };

  traced = what: p: value: b.trace (b.toJSON [ secret what (toString p) ]) value;
  importer = p:
    if nodes.isSymbol p then importSymbol p
    else if fetched p then cannotTell "it imports ${p}, a file of a fetched source, which the stand-in does not read"
    else if unwrittenWhy p != null then traced "read" p (cannotTell "it reads ${toString p}, ${unwrittenWhy p}")
    else traced "read" p (b.scopedImport scope p);

  # why an entry of the tree (or the folder it is in) was not written: a symbolic link, a submodule
  unwrittenWhy = p:
    let
      text = toString p;
      up = t: if t == "/" || t == "." || t == "" then null else if unwritten ? ${t} then unwritten.${t} else up (dirOf t);
    in
    if unwritten == { } || !(b.isPath p || b.isString p) then null else up text;

  # A recipe the stand-in cannot evaluate for a reason of its own (a fetched source, a builtin that needs the
  # network or a store): the reason is traced after `secret` (which no recipe can forge) and thrown; pinshift
  # reports the recipe as `cannot tell` when Nix's error is that message (pinshift.evaluation.evaluation).
  cannotTell = reason:
    b.trace (b.toJSON [ secret "cannot" reason ]) (b.throw "pinshift's stand-in cannot tell what this builds: ${reason}");
  # a path into a fetched source: a symbolic value, or a string made of one (`"${fetchTarball …}/x.nix"`)
  fetched = p: nodes.isSymbol p || (b.isString p && lib.hasPrefix "«" p);
  reading = what: read: p:
    if fetched p then cannotTell "it reads ${toString p}, a file of a fetched source, which the stand-in does not read"
    else if unwrittenWhy p != null then traced what p (cannotTell "it reads ${toString p}, ${unwrittenWhy p}")
    else traced what p (read p);

  fetcher = name: arg: nodes.symbol [ "builtins" name ] arg;
  unavailable = name: _: cannotTell "builtins.${name} needs the network or a Nix store, which the stand-in does not use";

  overrides = {
    import = importer;
    scopedImport = more: p: traced "read" p (b.scopedImport (scope // more) p);
    fetchTarball = fetcher "fetchTarball";
    fetchGit = fetcher "fetchGit";
    fetchurl = fetcher "fetchurl";
    fetchTree = fetcher "fetchTree";
    fetchMercurial = unavailable "fetchMercurial";
    fetchClosure = unavailable "fetchClosure";
    getFlake = unavailable "getFlake";
    derivation = attrs: nodes.symbol [ "derivation" ] attrs;
    derivationStrict = attrs: nodes.symbol [ "derivation" ] attrs;
    readFile = reading "read" b.readFile;
    pathExists = reading "exists" b.pathExists;
    readDir = reading "readdir" b.readDir;
    path = args: if b.isAttrs args then args.path else args;
    filterSource = f: p: p;
    getEnv = _: "";
    currentSystem = "x86_64-linux";
    currentTime = 0;
    nixPath = [ ];
    findFile = scope.__findFile;
    inherit (nodes.listOps) filter map concatMap;
    storePath = unavailable "storePath";
  };
  shadowed = b // overrides // { builtins = shadowed; };
  # `__getEnv`, `__readFile`, `__currentTime`, …: every primop's other name is the shadowed one
  underscored = b.listToAttrs (map (name: { name = "__${name}"; value = shadowed.${name}; }) (b.attrNames shadowed));
  scope = underscored // {
    inherit (overrides) import scopedImport fetchTarball fetchGit fetchTree fetchMercurial derivation derivationStrict map;
    builtins = shadowed;
    __nixPath = [ ];
    __findFile = path: name:
      if name == "nixpkgs" then nodes.symbol [ "<nixpkgs>" ]
      else if name == "nixpkgs/lib" then nodes.symbol [ "<nixpkgs/lib>" ]
      else cannotTell "<${name}> is looked up on NIX_PATH, which is the machine's (only <nixpkgs> stands in)";
  };

  # what `import`ing a symbolic value gives: the stand-in nixpkgs for a pin of nixpkgs
  importSymbol = v:
    let
      i = v.__pinshift;
      call = if i.history == [ ] then null else (lib.last i.history).call or null;
      given = if b.isString call then { url = call; } else if b.isAttrs call && !(nodes.isSymbol call) then call else { };
      url = toString (given.url or "");
      nixpkgs = (given.repo or "") == "nixpkgs" || b.match ".*/nix(pkgs|os)[^/]*(/.*)?" url != null;
      source = lib.concatStringsSep " " ([ (lib.concatStringsSep "." i.path) ]
        ++ lib.optional (url != "") url
        ++ lib.optional (given ? owner || given ? repo) "github:${toString (given.owner or "?")}/${toString (given.repo or "?")}"
        ++ lib.optional (given ? rev || given ? tag) (toString (given.rev or given.tag)));
    in
    if i.path == [ "<nixpkgs>" ] then standin { rev = null; source = "<nixpkgs>"; hash = null; }
    else if i.path == [ "<nixpkgs/lib>" ] then nodes.libOf nodes.symbol
    else if nixpkgs then standin (pinOf given)
    else cannotTell "it imports a fetched source (${source}), which the stand-in does not read (it imports nixpkgs only)";

  pinOf = given:
    let
      url = toString (given.url or "");
      archive = b.match "(.*)/archive/([^/]+)\\.(tar\\.gz|zip)" url;
    in {
      rev = given.rev or given.tag or (if archive != null then b.elemAt archive 1 else null);
      source =
        if given ? owner then "github:${given.owner}/${given.repo or "nixpkgs"}"
        else if archive != null then "${b.elemAt archive 0}/archive/{rev}.${b.elemAt archive 2}"
        else url;
      hash = given.sha256 or given.hash or given.narHash or null;
    };

  booleans = {
    allowUnfree = false; allowBroken = false; allowInsecure = false; allowUnsupportedSystem = false;
    cudaSupport = false; rocmSupport = false; allowAliases = true;
  };

  # nixpkgs' entry point: `import nixpkgs { config; overlays; … }`
  standin = pin: args:
    let given = args.config or { }; config = if b.isFunction given then given { } else given; in
    nodes.root { inherit pin; config = booleans // config; given = config; overlays = args.overlays or [ ]; };

  # the set a Flox recipe is called with (its caller's nixpkgs): nothing known, `config` included
  caller = nodes.root {
    pin = { rev = null; source = "«caller»"; hash = null; };
    config = nodes.typedSet [ "config" ] null;
  };

  call = f:
    let wanted = b.functionArgs f; in
    if wanted == { } then f caller else f (b.intersectAttrs wanted caller);
in
{
  recipe = root: file:
    let
      value = importer (root + "/${file}");
      result = if b.isFunction value then call value else value;
      summary = nodes.summarise result;
    in
    b.deepSeq summary summary;
}
