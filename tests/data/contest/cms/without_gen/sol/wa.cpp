#include <iostream>

int main() {
  unsigned int N;
  std::cin >> N;
  std::cout << N*99999999u/100000000u+1u << std::endl;
}
