import java.io.FileOutputStream;
import java.nio.file.Path;
import org.elasticsearch.bootstrap.ServerArgs;
import org.elasticsearch.common.io.stream.OutputStreamStreamOutput;
import org.elasticsearch.common.settings.KeyStoreWrapper;
import org.elasticsearch.common.settings.Settings;

/**
 * Writes the arguments Elasticsearch's server reads from its standard input
 * (org.elasticsearch.bootstrap.ServerArgs), as its CLI launcher would: an empty
 * keystore, the node settings given as key=value, the config and logs folders.
 *
 *   java -cp 'lib/*:.' WriteServerArgs OUT CONFIG_DIR LOGS_DIR PID_FILE key=value...
 */
public class WriteServerArgs {
    public static void main(String[] args) throws Exception {
        Settings.Builder settings = Settings.builder();
        for (int i = 4; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        ServerArgs serverArgs = new ServerArgs(
            false,
            false,
            Path.of(args[3]).toAbsolutePath(),
            KeyStoreWrapper.create(),
            settings.build(),
            Path.of(args[1]).toAbsolutePath(),
            Path.of(args[2]).toAbsolutePath()
        );
        try (var out = new OutputStreamStreamOutput(new FileOutputStream(args[0]))) {
            serverArgs.writeTo(out);
        }
    }
}
