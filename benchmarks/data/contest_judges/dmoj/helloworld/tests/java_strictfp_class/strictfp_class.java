public strictfp class strictfp_class {
  public static void main(String[] args) {
    System.out.println("Hello, World!");
  }
}
