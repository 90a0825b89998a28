int fail[32][1024][1024];

int main() {}
