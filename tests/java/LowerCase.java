import java.util.Locale;

/** Prints, for every code point that String.toLowerCase(Locale.ENGLISH) changes, "hex lower-case-code-points"
 *  (comma-separated hex), one per line: what the PTB tokenizer's -lowerCase does to a one-character token.
 *  Run as a single-file program: java LowerCase.java */
public class LowerCase {
  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (int c = 0; c <= 0x10FFFF; c++) {
      if (c >= 0xD800 && c <= 0xDFFF) {
        continue;
      }
      String one = new String(Character.toChars(c));
      String lower = one.toLowerCase(Locale.ENGLISH);
      if (!lower.equals(one)) {
        out.append(Integer.toHexString(c)).append(' ');
        lower.codePoints().forEach(p -> out.append(Integer.toHexString(p)).append(','));
        out.append('\n');
      }
    }
    System.out.print(out);
  }
}
