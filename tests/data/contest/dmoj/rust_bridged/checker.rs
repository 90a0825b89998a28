fn main() {
    std::process::exit(1); // WA
}
