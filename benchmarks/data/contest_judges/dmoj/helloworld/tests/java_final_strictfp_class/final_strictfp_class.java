public final strictfp class final_strictfp_class {
  public static void main(String[] args) {
    System.out.println("Hello, World!");
  }
}
