# pinshift as a flake: `nix run`, `nix profile install`, `nix develop` (a shell with pinshift's Python
# dependencies, its test dependencies, git and Nix). The package is default.nix, built with the nixpkgs
# input's Python builders; tests/test_nix_packaging.py evaluates this file against a stand-in of them.
{
  description = "Syntax-aware refactoring of Nix build recipes and per-step git migrations between nixpkgs pins";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forEachSystem = f: nixpkgs.lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
    in
    {
      packages = forEachSystem (system: pkgs: {
        pinshift = import ./default.nix { inherit pkgs; };
        default = self.packages.${system}.pinshift;
      });

      apps = forEachSystem (system: pkgs: {
        default = {
          type = "app";
          program = "${self.packages.${system}.default}/bin/${self.packages.${system}.default.meta.mainProgram}";
        };
      });

      devShells = forEachSystem (system: pkgs: {
        default = pkgs.mkShell {
          packages = [
            (pkgs.python3.withPackages (python3Packages:
              self.packages.${system}.default.dependencies
              ++ (with python3Packages; [ pytest hypothesis build pyyaml jsonschema gitpython mypy setuptools wheel ])))
            pkgs.pre-commit # pyproject's test extras, with the Python ones above
            pkgs.git
            pkgs.nix
          ];
        };
      });
    };
}
