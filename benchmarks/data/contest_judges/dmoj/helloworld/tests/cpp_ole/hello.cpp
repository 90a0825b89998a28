#include <cstdio>

int main() {
  while (1)
    putchar('a');
  return 0;
}
