{
  description = "Link shortening service: development shell";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = [ pkgs.nodejs_20 pkgs.postgresql_16 pkgs.redis pkgs.util-linux ];
          shellHook = ''
            echo "Node $(node --version), PostgreSQL $(postgres --version | cut -d' ' -f3), Redis $(redis-server --version | cut -d' ' -f3)"
            echo "npm ci && npm start    # the service on the embedded database"
            echo "npm test               # the test suite (set TEST_DATABASE_URL for PostgreSQL)"
          '';
        };
      });
    };
}
