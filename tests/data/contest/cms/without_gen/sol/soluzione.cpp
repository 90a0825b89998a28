#include <iostream>

int main() {
  int N;
  std::cin >> N;
  std::cout << N << std::endl;
}
