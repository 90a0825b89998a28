public class нет {
    public static void main(String[] args){
        System.out.println("Hello, World!");
    }
}
