Unit communication;

interface
function userfunc(x : longint) : longint;

implementation

function userfunc(x : longint) : longint;
begin
   userfunc := x + 1;
end;

end.
