//! The `dbmeter` binary: everything happens in `dbmeter-cli`.

fn main() {
    std::process::exit(dbmeter_cli::main(std::env::args().skip(1).collect()));
}
