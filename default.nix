# pinshift built with nixpkgs' Python builders, from this checkout:
#
#   nix-build                     # ./result/bin/pinshift
#   nix-env -f . -i               # install it
#   nix-build --arg pkgs 'import <nixpkgs> { }'
#
# Name, version, entry point and runtime dependencies are read from pyproject.toml, so they cannot drift
# from what `pip install .` installs; each dependency is the nixpkgs Python package of the same name, except
# the `pythonPackageNames` rename. tests/test_nix_packaging.py evaluates this file (and flake.nix) with
# nix-instantiate against a stand-in of nixpkgs' Python builders and checks all of that against pyproject.toml.
{ pkgs ? import <nixpkgs> { } }:

let
  inherit (pkgs) lib;
  python3Packages = pkgs.python3Packages;
  project = (builtins.fromTOML (builtins.readFile ./pyproject.toml)).project;

  # pyproject's name -> the attribute path of the same package in nixpkgs' python3Packages
  pythonPackageNames = {
    "tree-sitter-nix" = [ "tree-sitter-grammars" "tree-sitter-nix" ]; # nixpkgs' binding of its own grammar
  };
  # "click>=8.1,<9" -> "click"
  requirementName = requirement: builtins.head (builtins.match "([A-Za-z0-9._-]+).*" requirement);
  pythonPackage = requirement:
    let name = requirementName requirement;
    in lib.attrByPath (pythonPackageNames.${name} or [ name ]) (throw "pinshift: no python3Packages for ${name}")
      python3Packages;
in
python3Packages.buildPythonApplication {
  pname = project.name;
  version = project.version;
  pyproject = true;

  src = lib.cleanSource ./.;

  build-system = [ python3Packages.setuptools python3Packages.wheel ];
  dependencies = map pythonPackage project.dependencies;
  # nixpkgs versions its grammar bindings by date (0+unstable…) and pins one tree-sitter for all of them:
  # pyproject's ranges are for PyPI's releases, so they are not enforced here
  pythonRelaxDeps = [ "tree-sitter" "tree-sitter-nix" ];

  # git for every repository command, nix-instantiate for diff, verify and migrate's build check: the
  # user's own first, these when PATH has none
  makeWrapperArgs = [ "--suffix" "PATH" ":" (lib.makeBinPath [ pkgs.git pkgs.nix ]) ];

  pythonImportsCheck = [ "pinshift.cli" ];
  doCheck = false; # the test suite needs git repositories and nix-instantiate in the sandbox

  meta = {
    description = project.description;
    license = lib.licenses.mit;
    mainProgram = builtins.head (builtins.attrNames project.scripts);
  };
}
