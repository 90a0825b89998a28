public class helloworld {
    public static void not_main(String[] argv) {
        System.out.println("Hello, World!");
    }
}
