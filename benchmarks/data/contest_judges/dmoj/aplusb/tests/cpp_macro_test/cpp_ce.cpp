#ifdef SIGNATURE_GRADER

int main() { return -1; }
#endif
