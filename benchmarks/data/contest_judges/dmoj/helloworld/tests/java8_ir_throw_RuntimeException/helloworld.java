public class helloworld {
    public static void main(String[] argv) {
        throw new RuntimeException();
    }
}