public strictfp abstract class strictfp_abstract_class {
  public static void main(String[] args) {
    System.out.println("Hello, World!");
  }
}
